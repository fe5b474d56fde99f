// The email detector on 64 KiB of ordinary, dense and hostile text: ms per 64 KiB of this build
// against another's, measured interleaved. `node bench/pii-email.mjs <reference dist dir> [dist dir]`.

import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

const REF = resolve(process.argv[2] ?? "dist");
const DIST = resolve(process.argv[3] ?? new URL("../dist", import.meta.url).pathname);
// The detector is internal to the PII feature: src/features/pii since the features moved, src/pii in older builds.
const emailModule = (dist) => ["features/pii/kinds/email.js", "pii/kinds/email.js"].map((p) => join(dist, p)).find((p) => existsSync(p)) ?? join(dist, "features/pii/kinds/email.js");
const { findEmails: newFind } = await import(emailModule(DIST));
const { findEmails: oldFind } = await import(emailModule(REF));
const K = 64 * 1024;
const fill = (unit) => unit.repeat(Math.ceil(K / unit.length)).slice(0, K);
const cases = {
  "prose with emails": fill("Customer 12 wrote from ann.lee12@mail.example.co.uk asking why order 1012 has not shipped yet. "),
  "lorem (no @)": fill("lorem ipsum dolor sit amet "),
  "letters no @": "a".repeat(K),
  "dots": ".".repeat(K),
  "all @": "@".repeat(K),
  "a@ repeated": fill("a@"),
  "aaaa@ (64 local)": fill("a".repeat(64) + "@"),
  "a.a.a @": fill("a.".repeat(40) + "@"),
  "@a.a.a.a": fill("@" + "a.".repeat(40)),
  "@aaaa (long label)": fill("@" + "a".repeat(70)),
  "x@ + labels": fill("x@" + "ab.".repeat(9) + "c"),
  "x@ + long labels": fill("x@" + ("a".repeat(62) + ".").repeat(9) + "c"),
  "ann@x.org,": fill("ann@x.org,"),
  "é@é": fill("é".repeat(30) + "@" + "é".repeat(30)),
};
const time = (f, text) => { const t = []; let n = 0; for (let i = 0; i < 9; i++) { const t0 = performance.now(); n = f(text).length; t.push(performance.now() - t0); } t.sort((a, b) => a - b); return [t[4], n]; };
console.log("text (64 KiB)".padEnd(24), "ref ms".padStart(10), "this ms".padStart(10), "ratio".padStart(7), " found");
for (const [name, text] of Object.entries(cases)) {
  oldFind(text); newFind(text);
  const [o, no] = time(oldFind, text); const [nw, nn] = time(newFind, text); const [o2] = time(oldFind, text); const [nw2] = time(newFind, text);
  const before = Math.min(o, o2), after = Math.min(nw, nw2);
  console.log(name.padEnd(24), before.toFixed(2).padStart(10), after.toFixed(2).padStart(10), (after / before).toFixed(2).padStart(7), ` ${no}/${nn}`);
}
