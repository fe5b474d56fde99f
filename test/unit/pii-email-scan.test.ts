// The email detector's scan outwards from each `@`: adversarial texts (long runs of dots, letters
// without `@`, many `@`) end with what they hold, and it finds what the pattern-and-isEmail scan found.

import isEmailModule from "validator/lib/isEmail.js";
import { describe, expect, it } from "vitest";
import { findEmails } from "../../src/features/pii/kinds/email.js";
import type { Span } from "../../src/features/pii/kinds/span.js";

const isEmail = isEmailModule.default;
const K = 64 * 1024;
const fill = (unit: string): string => unit.repeat(Math.ceil(K / unit.length)).slice(0, K);
const found = (text: string): string[] => findEmails(text).map((s) => text.slice(s.start, s.end));

/**
 * The oracle: the detector before this scan, a candidate pattern confirmed by validator's isEmail
 * (it cost about 90 ms per 64 KiB of dense or hostile text). Kept here to prove nothing is lost.
 */
function findEmailsByPattern(text: string): Span[] {
  const local = /[\p{L}\p{N}._%+'-]/u;
  const domain = /@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.){1,8}(?:\p{L}{2,24}|xn--[a-z0-9-]{1,59})(?![\p{L}\p{N}_-]|\.[\p{L}\p{N}])/uy;
  const files = new Set(["png", "js", "json", "txt", "log", "gz", "md", "css"]);
  const out: Span[] = [];
  for (let at = text.indexOf("@"); at !== -1; at = text.indexOf("@", at + 1)) {
    let start = at;
    while (start > 0 && at - start <= 64 && local.test(text[start - 1] ?? "")) start--;
    if (at - start > 64) continue;
    const dots = text.slice(start, at).lastIndexOf("..");
    if (dots !== -1) start += dots + 2;
    while (start < at && (text[start] === "'" || text[start] === ".")) start++;
    if (start === at) continue;
    domain.lastIndex = at;
    const m = domain.exec(text);
    if (m === null) continue;
    const end = at + m[0].length;
    const value = text.slice(start, end);
    if (text.slice(Math.max(0, start - 3), start) === "://") continue;
    if (text[end] === ":" && /[\w~/.]/.test(text[end + 1] ?? "")) continue;
    if (files.has(value.slice(value.lastIndexOf(".") + 1).toLowerCase())) continue;
    if (!isEmail(value, { allow_utf8_local_part: true, require_tld: true, allow_ip_domain: false })) continue;
    out.push({ start, end });
    at = end - 1;
  }
  return out;
}

describe("findEmails on adversarial text", () => {
  it.each([
    ["dots", ".".repeat(K), []],
    ["letters without @", "a".repeat(K), []],
    ["@ only", "@".repeat(K), []],
    ["a@ repeated", fill("a@"), []],
    ["64 letters and @", fill(`${"a".repeat(64)}@`), []],
    ["dots before @", fill(`${"a.".repeat(40)}@`), []],
    ["dots after @", fill(`@${"a.".repeat(40)}`), []],
    ["a long label", fill(`@${"a".repeat(70)}`), []],
    ["runs of dots around @", fill(`x${".".repeat(50)}@${".".repeat(50)}y`), []],
    ["accented letters around @", fill(`${"é".repeat(30)}@${"é".repeat(30)}`), []],
  ] as const)("finds nothing in 64 KiB of %s", (_, text, expected) => {
    expect(found(text)).toEqual(expected);
  });

  it("finds every one of 64 KiB of addresses back to back, and each mailbox after a run of dots", () => {
    expect(found(fill("ann@x.org,")).length).toBe(6553);
    expect(found(`see${".".repeat(40)}ann@example.com and bob@example.org`)).toEqual(["ann@example.com", "bob@example.org"]);
    expect(found(`${"b".repeat(65)}@example.com ${"c".repeat(64)}@example.com`)).toEqual([`${"c".repeat(64)}@example.com`]);
  });

  it("still finds ordinary addresses and skips logins, SSH remotes and asset names", () => {
    const text = "Mail jane.doe@example.com, o'brien@example.ie or josé@exämple.de; not git@github.com:org/repo.git, https://user@host.example.com/ or icon@2x.png.";
    expect(found(text)).toEqual(["jane.doe@example.com", "o'brien@example.ie", "josé@exämple.de"]);
  });
});

describe("findEmails against the pattern it replaced", () => {
  /** Random texts over the characters that decide where an address starts and ends. */
  const ALPHABET = ["a", "b", "Z", "x", "n", "-", "-", ".", ".", "@", "@", "_", "'", "+", "%", "0", "7", " ", ":", "/", "é", "用", "𝐀", "Ａ", "\n", "com", "org", "xn--", "png", "."];
  let seed = 21;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };

  it("finds the same spans in 4,000 random texts", () => {
    for (let i = 0; i < 4000; i++) {
      let text = "";
      for (let j = random(60) + 5; j > 0; j--) text += ALPHABET[random(ALPHABET.length)];
      expect(findEmails(text), JSON.stringify(text)).toEqual(findEmailsByPattern(text));
    }
  });

  it("finds the same spans around labels, top-level names and mailboxes at their length limits", () => {
    const labels = [63, 64].map((n) => "d".repeat(n));
    const cases = [
      ...labels.map((l) => `ann@${l}.example.com`),
      `ann@${"a.".repeat(8)}com`, `ann@${"a.".repeat(9)}com`, `ann@x.${"c".repeat(24)}`, `ann@x.${"c".repeat(25)}`,
      `${"l".repeat(64)}@x.org`, `${"é".repeat(40)}@x.org`, `ann@${"𝐀".repeat(40)}.org`, `ann@x.${"𝐀".repeat(3)}`,
      "ann@x.xn--abc-", "ann@x.org.-y", "ann@x.org_", "ann.@x.org", "'.ann@x.org", `ann@${"a".repeat(60)}.${"b".repeat(60)}.${"c".repeat(60)}.${"d".repeat(60)}.com`,
    ];
    for (const text of cases) expect(findEmails(`<${text}>`), text).toEqual(findEmailsByPattern(`<${text}>`));
  });
});
