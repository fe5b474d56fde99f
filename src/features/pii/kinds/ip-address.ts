// IP addresses: IPv4 and IPv6 candidates confirmed by validator's isIP. Not personal and skipped:
// loopback, unspecified, broadcast and netmask values, and dotted version numbers ("v1.2.3.4").

import isIPModule from "validator/lib/isIP.js";
import { before, scan, type Span } from "./span.js";

// validator's files are CommonJS with the function as both the module and its `default`.
const isIP = isIPModule.default;

// A slash before is a path (`lib/1.2.3.4`) unless it is the `//` of a URL (`http://10.0.0.5/`).
const V4 = /(?<![\w.\-+@#])(?<![^/]\/|^\/)(?:\d{1,3}\.){3}\d{1,3}(?![\w\-@]|\.\d)/g;
const V6 = /(?<![\w:.%])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4})?(?:%[A-Za-z0-9_]{1,15})?(?![\w:]|\.\w)/g;
const VERSION_CONTEXT = /(?:\bv|version|\bver|\brelease|\bbuild|\bfirmware|\bfw|\bassembly|\bsdk|\bruntime|\bkernel|\bpatch|@|~>|>=|<=|==|[~^])["'\s:=(]{0,4}$/;
/** A lockfile's `name (1.2.3.4)` line (Gemfile.lock): the parentheses hold the name's version. */
const NAME_VERSION = /^[ \t]*[A-Za-z][\w.-]* \($/;
/**
 * Such a line's characters before the version, at most: a longer line is no lockfile's, and its start
 * is not looked for (each address of a one-line JSON would scan the whole line back).
 */
const NAME_LINE_CHARS = 200;

function personalV4(value: string): boolean {
  const [first] = value.split(".");
  return first !== "0" && first !== "127" && first !== "255";
}

/** Whether the line up to `at` is a lockfile's `name (`, looking back NAME_LINE_CHARS at most. */
function nameVersionLine(text: string, at: number): boolean {
  if (text[at - 1] !== "(") return false;
  const from = Math.max(0, at - NAME_LINE_CHARS);
  const head = text.slice(from, at);
  const newline = head.lastIndexOf("\n");
  if (newline === -1 && from > 0) return false;
  return NAME_VERSION.test(head.slice(newline + 1));
}

export function findIpAddresses(text: string): Span[] {
  const out: Span[] = [];
  // IPv6 first: `::ffff:192.0.2.1` is one address, not an IPv4 one after some colons.
  if (text.includes(":")) {
    for (const m of scan(V6, text)) {
      const value = m[0];
      // `1::2` (a Python slice), `dead::beef` and `::1` are not worth a token: real addresses
      // carry a group of three or more hex digits and at least one decimal digit.
      if (!/[0-9A-Fa-f]{3}/.test(value) || !/\d/.test(value) || !isIP(value, 6)) continue;
      out.push({ start: m.index, end: m.index + value.length });
    }
  }
  if (text.includes(".")) {
    for (const m of scan(V4, text)) {
      if (!isIP(m[0], 4) || !personalV4(m[0])) continue;
      if (VERSION_CONTEXT.test(before(text, m.index, 14))) continue;
      const end = m.index + m[0].length;
      if (nameVersionLine(text, m.index) && /^\)[ \t]*(?:\n|$)/.test(text.slice(end, end + 3))) continue;
      // `10.0.0.0/8` names a network, not a host.
      if (m[0].endsWith(".0") && /^\/\d/.test(text.slice(end, end + 2))) continue;
      out.push({ start: m.index, end });
    }
  }
  return out;
}
