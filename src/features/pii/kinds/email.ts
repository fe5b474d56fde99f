// Email addresses: found from each `@` by scanning outwards (a mailbox of plus tags, dots and any
// letter before it; labels and a top-level name after it), linear in the text; SSH remotes, URL
// user names and retina asset names are not emails.

import type { Span } from "./span.js";

/** The longest mailbox (before `@`) and domain label RFC 5321 allows; the longest address isEmail takes. */
const MAX_LOCAL = 64;
const MAX_LABEL = 63;
const MAX_ADDRESS = 254;
/** Labels before the top-level name, at most. */
const MAX_LABELS = 8;

const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;
const LETTERS = /^\p{L}{2,24}$/u;
const PUNYCODE = /^xn--[a-z0-9-]{1,59}$/;
const ASTRAL = /[\ud800-\udfff]/;
/** Full-width forms (`ｅｘａｍｐｌｅ`): letters, but no host name holds them. */
const FULL_WIDTH = /[\uff01-\uff5e]/;

/** Real top-level domains that in machine data are almost always file names (`icon@2x.png`). */
const FILE_EXTENSIONS = new Set([
  "png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "js", "mjs", "cjs", "ts", "tsx", "jsx", "json", "css", "scss",
  "map", "tgz", "gz", "zip", "md", "txt", "yml", "yaml", "lock", "toml", "py", "rb", "go", "rs", "java", "html",
  "htm", "xml", "pdf", "csv", "log", "sh", "wasm", "node", "whl", "jar",
]);

/** Letters and digits of the BMP beyond ASCII, learned as met: 1 is one, 2 is not (a regex test per character is slow). */
const BMP_ALNUM = new Uint8Array(0x10000);

function isBmpAlnum(c: number): boolean {
  if (c < 0x80) return (c >= 48 && c <= 57) || ((c | 0x20) >= 97 && (c | 0x20) <= 122);
  BMP_ALNUM[c] ||= LETTER_OR_DIGIT.test(String.fromCharCode(c)) ? 1 : 2;
  return BMP_ALNUM[c] === 1;
}

/** Whether the character at `i` is a letter or digit (a surrogate pair counts as one, read at its first half). */
function isAlnum(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdfff) return isBmpAlnum(c);
  return LETTER_OR_DIGIT.test(String.fromCodePoint(text.codePointAt(i) ?? 0));
}

/** Code units of the character at `i` (2 for a surrogate pair). */
const width = (text: string, i: number): number => (text.charCodeAt(i) >= 0xd800 && text.charCodeAt(i) <= 0xdbff && i + 1 < text.length ? 2 : 1);

/** A character of the part before `@` (plus tags, dots, apostrophes, any letter of the BMP). */
function isLocal(c: number): boolean {
  if (c === 46 || c === 95 || c === 37 || c === 43 || c === 39 || c === 45) return true;
  return (c < 0xd800 || c > 0xdfff) && isBmpAlnum(c);
}

/** Where the mailbox before `at` starts, or -1: at most MAX_LOCAL characters, after the last `..`, not at a quote or dot. */
function mailboxStart(text: string, at: number): number {
  let start = at;
  let afterDots = -1;
  while (start > 0 && isLocal(text.charCodeAt(start - 1))) {
    start--;
    if (at - start > MAX_LOCAL) return -1;
    // `see...ann@x.org` holds the mailbox after the dots, not one starting there.
    if (afterDots === -1 && text.charCodeAt(start) === 46 && text.charCodeAt(start + 1) === 46) afterDots = start + 2;
  }
  if (afterDots !== -1) start = afterDots;
  // `['ann@x.org']` (a Python list) holds the mailbox after the quote.
  while (start < at && (text.charCodeAt(start) === 39 || text.charCodeAt(start) === 46)) start++;
  return start === at ? -1 : start;
}

/** The label ends domainEnd reads (MAX_LABELS + 2 at most), kept to spare an array per `@`. */
const RUN_ENDS = new Int32Array(MAX_LABELS + 2);

/** Whether text[from, to) is a top-level name: 2 to 24 letters, or punycode. */
function isTopLevel(text: string, from: number, to: number): boolean {
  let ascii = to - from >= 2 && to - from <= 24;
  for (let i = from; ascii && i < to; i++) ascii = ((text.charCodeAt(i) | 0x20) >= 97 && (text.charCodeAt(i) | 0x20) <= 122);
  if (ascii) return true;
  const name = text.slice(from, to);
  return LETTERS.test(name) || PUNYCODE.test(name);
}

/**
 * Where the domain after the `@` at `at` ends, or -1: labels of letters, digits and inner hyphens,
 * then a top-level name of letters (or punycode), and no more of a longer token after it.
 */
function domainEnd(text: string, at: number): number {
  // The runs of letters, digits and hyphens joined by single dots, as their end indices; each is read once.
  let runs = 0;
  let validUpTo = 0;
  for (let pos = at + 1; runs <= MAX_LABELS + 1; pos++) {
    const from = pos;
    let units = 0;
    while (pos < text.length && (text.charCodeAt(pos) === 45 || isAlnum(text, pos)) && units <= MAX_LABEL) {
      units++;
      pos += width(text, pos);
    }
    if (pos === from) break;
    const valid = units <= MAX_LABEL && text.charCodeAt(from) !== 45 && text.charCodeAt(pos - 1) !== 45;
    if (valid && validUpTo === runs) validUpTo++;
    RUN_ENDS[runs++] = pos;
    if (units > MAX_LABEL || text.charCodeAt(pos) !== 46) break;
  }
  // The longest chain whose every label is valid, whose last label is a top-level name and whose end no label continues.
  for (let last = Math.min(validUpTo, MAX_LABELS + 1) - 1; last >= 1; last--) {
    const end = RUN_ENDS[last]!;
    if (!isTopLevel(text, RUN_ENDS[last - 1]! + 1, end)) continue;
    const next = text.charCodeAt(end);
    if (next === 95 || next === 45 || (end < text.length && isAlnum(text, end))) continue;
    if (next === 46 && end + 1 < text.length && isAlnum(text, end + 1)) continue;
    return end;
  }
  return -1;
}

/** What a mail system would take of a candidate: lengths in bytes, a non-empty last mailbox part, a host name's characters. */
function deliverable(local: string, domain: string, tld: string): boolean {
  if (local.endsWith(".") || local.length + 1 + domain.length > MAX_ADDRESS) return false;
  if (Buffer.byteLength(local) > MAX_LOCAL || Buffer.byteLength(domain) > MAX_ADDRESS) return false;
  if (FULL_WIDTH.test(domain)) return false;
  // A label's length is counted in code units there, and a top-level name holds no astral letter.
  return !ASTRAL.test(domain) || (!ASTRAL.test(tld) && domain.split(".").every((label) => label.length <= MAX_LABEL));
}

export function findEmails(text: string): Span[] {
  const out: Span[] = [];
  for (let at = text.indexOf("@"); at !== -1; at = text.indexOf("@", at + 1)) {
    const start = mailboxStart(text, at);
    if (start === -1) continue;
    const end = domainEnd(text, at);
    if (end === -1) continue;
    // `git+ssh://git@github.com/...` and `https://user@host/` name a login, not a mailbox.
    if (text.slice(Math.max(0, start - 3), start) === "://") continue;
    // `git@github.com:org/repo.git` is an SSH remote.
    if (text[end] === ":" && /[\w~/.]/.test(text[end + 1] ?? "")) continue;
    const domain = text.slice(at + 1, end);
    const tld = domain.slice(domain.lastIndexOf(".") + 1);
    if (FILE_EXTENSIONS.has(tld.toLowerCase())) continue;
    if (!deliverable(text.slice(start, at), domain, tld)) continue;
    out.push({ start, end });
    at = end - 1;
  }
  return out;
}
