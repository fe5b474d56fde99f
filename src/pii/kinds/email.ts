// Email addresses: a candidate pattern that allows plus tags, subdomains and internationalised names,
// confirmed by validator's isEmail; SSH remotes, URL user names and retina asset names are not emails.

import isEmailModule from "validator/lib/isEmail.js";
import type { Span } from "./span.js";

// validator's files are CommonJS with the function as both the module and its `default`.
const isEmail = isEmailModule.default;

/** A character of the part before `@` (plus tags, dots, apostrophes, any letter). */
const LOCAL = /[\p{L}\p{N}._%+'-]/u;
/** From the `@`: the domain, a dot and a top-level name (letters, or punycode), and no more of a longer token. */
const DOMAIN = /@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.){1,8}(?:\p{L}{2,24}|xn--[a-z0-9-]{1,59})(?![\p{L}\p{N}_-]|\.[\p{L}\p{N}])/uy;

/** Real top-level domains that in machine data are almost always file names (`icon@2x.png`). */
const FILE_EXTENSIONS = new Set([
  "png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "js", "mjs", "cjs", "ts", "tsx", "jsx", "json", "css", "scss",
  "map", "tgz", "gz", "zip", "md", "txt", "yml", "yaml", "lock", "toml", "py", "rb", "go", "rs", "java", "html",
  "htm", "xml", "pdf", "csv", "log", "sh", "wasm", "node", "whl", "jar",
]);

export function findEmails(text: string): Span[] {
  const out: Span[] = [];
  // Anchored on each `@`: cheaper than a pattern tried at every position of a large text.
  for (let at = text.indexOf("@"); at !== -1; at = text.indexOf("@", at + 1)) {
    let start = at;
    while (start > 0 && at - start <= 64 && LOCAL.test(text[start - 1] ?? "")) start--;
    if (at - start > 64) continue;
    // A mailbox does not start with a quote or a dot, nor hold two dots in a row: `['ann@x.org']` (a
    // Python list) and `see...ann@x.org` hold the mailbox after them, not one starting there.
    const dots = text.slice(start, at).lastIndexOf("..");
    if (dots !== -1) start += dots + 2;
    while (start < at && (text[start] === "'" || text[start] === ".")) start++;
    if (start === at) continue;
    DOMAIN.lastIndex = at;
    const domain = DOMAIN.exec(text);
    if (domain === null) continue;
    const end = at + domain[0].length;
    const value = text.slice(start, end);
    // `git+ssh://git@github.com/...` and `https://user@host/` name a login, not a mailbox.
    if (text.slice(Math.max(0, start - 3), start) === "://") continue;
    // `git@github.com:org/repo.git` is an SSH remote.
    if (text[end] === ":" && /[\w~/.]/.test(text[end + 1] ?? "")) continue;
    const tld = value.slice(value.lastIndexOf(".") + 1).toLowerCase();
    if (FILE_EXTENSIONS.has(tld)) continue;
    if (!isEmail(value, { allow_utf8_local_part: true, require_tld: true, allow_ip_domain: false })) continue;
    out.push({ start, end });
    at = end - 1;
  }
  return out;
}
