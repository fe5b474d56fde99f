// Phone numbers: runs of digits in a phone's shape, confirmed by libphonenumber-js's full metadata as
// a valid number: international with +, or US by default. Bare digit runs need a word like "phone".

import { validPhoneDigits } from "./phone-validity.js";
import { before, digitsOf, scan, type Span } from "./span.js";

/**
 * Digit groups joined by one separator each (`+44 20 7946 0958`, `(415) 555-2671`, `415.555.2671`),
 * and an extension (`x123`, ` ext. 12`) kept with the number.
 */
const RUN = /(?<![\w+.\-/@#])(?:\+ ?)?(?:\(\d{1,5}\) ?)?\d{1,15}(?:(?:[ .\-\u00a0]|\) ?| ?\()\d{1,6}){0,6}((?: ?(?:x|ext\.?|extension) ?)\d{1,6})?(?![\w\-/@]|[.,:]\d)/gi;
/** `001-541-754-3010`, `0044 20 7946 0958`, `011 44 20...`: an exit code instead of `+`. */
const EXIT_CODE = /^(?:00|011[ .-])(?=[1-9])/;
const CONTEXT = /(?:phone|\btel\b|\btel\.|telephone|mobile|\bcell|\bfax|\bcall|whatsapp|\bsms|\bdial|\bph\b|\bph\.|\bmob\b|\bcontact|\breach|hotline)[^\d\n]{0,16}$/;
const US_GROUPS = new Set(["3,3,4", "1,3,3,4", "10", "11"]);
const DOTTED_US = /^(?:\+?1[ .])?\(?\d{3}\)?\.\d{3}\.\d{4}$/;

export function findPhones(text: string): Span[] {
  const out: Span[] = [];
  for (const m of scan(RUN, text)) {
    const value = m[1] === undefined ? m[0] : m[0].slice(0, m[0].length - m[1].length);
    const exit = EXIT_CODE.exec(value);
    const international = value.startsWith("+") || exit !== null;
    const digits = digitsOf(exit === null ? value : value.slice(exit[0].length));
    if (digits.length < 7 || digits.length > 15) continue;
    const separated = /[ .\-\u00a0()]/.test(value);
    // A bare run of digits is an id, a timestamp or a count unless the text says it is a phone.
    if (!separated && !international && !CONTEXT.test(before(text, m.index, 32))) continue;
    // Dots also join versions and addresses: only the US 3.3.4 shape counts.
    if (value.includes(".") && !DOTTED_US.test(value) && !international) continue;
    if (value.includes("(") !== value.includes(")")) continue;
    // Without a country code only the US shapes count: 415 555 2671, 1-800-555-0199, 4155552671.
    if (!international && !US_GROUPS.has(value.match(/\d+/g)?.map((g) => g.length).join() ?? "")) continue;
    const end = m.index + m[0].length;
    // One more number of a row of numbers (a table, a hex dump) is not a phone.
    if (/^[ \t]\d/.test(text.slice(end, end + 2)) || /\d[ \t]$/.test(text.slice(Math.max(0, m.index - 2), m.index))) continue;
    if (!validPhoneDigits(digits, international)) continue;
    out.push({ start: m.index, end });
  }
  return out;
}
