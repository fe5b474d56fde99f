// Payment card numbers: 13 to 19 digits, bare or in the printed groups (4-4-4-4, Amex 4-6-5), with a
// known issuer prefix for their length and a valid Luhn checksum. Ids that fail either pass untouched.

import { luhnValid } from "./luhn.js";
import { before, digitsOf, scan, type Span } from "./span.js";

const CANDIDATE = /(?<![\w.\-+/@#])\d{4}(?:[ -]?\d){9,15}(?![\w\-/@]|[.,:]\d)/g;

/** Issuer prefix ranges (first digits, inclusive) and the lengths their cards have. */
const ISSUERS: readonly { from: number; to: number; lengths: readonly number[] }[] = [
  { from: 4, to: 4, lengths: [13, 16, 19] }, // Visa
  { from: 51, to: 55, lengths: [16] }, // Mastercard
  { from: 2221, to: 2720, lengths: [16] }, // Mastercard 2-series
  { from: 34, to: 34, lengths: [15] }, // American Express
  { from: 37, to: 37, lengths: [15] }, // American Express
  { from: 6011, to: 6011, lengths: [16, 17, 18, 19] }, // Discover
  { from: 644, to: 649, lengths: [16, 17, 18, 19] }, // Discover
  { from: 65, to: 65, lengths: [16, 17, 18, 19] }, // Discover
  { from: 622126, to: 622925, lengths: [16, 17, 18, 19] }, // Discover / UnionPay co-brand
  { from: 62, to: 62, lengths: [16, 17, 18, 19] }, // UnionPay
  { from: 3528, to: 3589, lengths: [16, 17, 18, 19] }, // JCB
  { from: 2131, to: 2131, lengths: [15] }, // JCB (15 digits)
  { from: 1800, to: 1800, lengths: [15] }, // JCB (15 digits)
  { from: 2200, to: 2204, lengths: [16, 17, 18, 19] }, // Mir
  { from: 5018, to: 5018, lengths: [13, 14, 15, 16, 17, 18, 19] }, // Maestro
  { from: 5020, to: 5020, lengths: [13, 14, 15, 16, 17, 18, 19] }, // Maestro
  { from: 5038, to: 5038, lengths: [13, 14, 15, 16, 17, 18, 19] }, // Maestro
  { from: 5893, to: 5893, lengths: [13, 14, 15, 16, 17, 18, 19] }, // Maestro
  { from: 6304, to: 6304, lengths: [13, 14, 15, 16, 17, 18, 19] }, // Maestro
  { from: 6759, to: 6759, lengths: [13, 14, 15, 16, 17, 18, 19] }, // Maestro
  { from: 6761, to: 6763, lengths: [13, 14, 15, 16, 17, 18, 19] }, // Maestro
  { from: 300, to: 305, lengths: [14, 16, 17, 18, 19] }, // Diners Club
  { from: 36, to: 36, lengths: [14, 16, 17, 18, 19] }, // Diners Club
  { from: 38, to: 39, lengths: [14, 16, 17, 18, 19] }, // Diners Club (38520000023237 is its 14-digit test card)
];

function knownIssuer(digits: string): boolean {
  return ISSUERS.some(({ from, to, lengths }) => {
    const prefix = Number(digits.slice(0, String(from).length));
    return prefix >= from && prefix <= to && lengths.includes(digits.length);
  });
}

/** Printed groups: one separator throughout, groups of four (the last may be shorter), or 4-6-5 / 4-6-4. */
function wellGrouped(value: string): boolean {
  const separators = value.match(/[ -]/g);
  if (separators === null) return true;
  if (new Set(separators).size > 1) return false;
  const groups = value.split(/[ -]/).map((g) => g.length);
  if (groups.join() === "4,6,5" || groups.join() === "4,6,4") return true;
  const last = groups.pop() ?? 0;
  return groups.every((n) => n === 4) && last >= 1 && last <= 4;
}

/** A word for a card earlier on the line (`card ending 1234, full number ...`). */
const CARD_CONTEXT = /card|\bcc\b|credit|debit|visa|payment|\bpan\b|kart|carte|tarjeta|carta/;
const NOT_CARD = /(?:gtin|\bean|isbn|\bupc|\bid|_id|order|invoice|tracking|serial|phone|\btel|account|\bacct|\bref)["'\s:=#-]{0,4}$/;

/** Numbers and the separators of a table row, nothing else (no word that could name a card). */
const numbersOnly = (line: string): boolean => /^[\d\s,;|.:+\-eE"']*$/.test(line) && /[,;|\t]/.test(line);

export function findCreditCards(text: string): Span[] {
  const out: Span[] = [];
  // Whether the line of the last candidate is numbers only, kept for the candidates after it on that
  // line: a one-line JSON of cards would otherwise be read whole once per card.
  let lineEnd = -1;
  let lineNumbersOnly = false;
  const onNumbersOnlyLine = (start: number): boolean => {
    if (start >= lineEnd) {
      const from = text.lastIndexOf("\n", start) + 1;
      const to = text.indexOf("\n", start);
      lineEnd = to === -1 ? text.length : to;
      lineNumbersOnly = numbersOnly(text.slice(from, lineEnd));
    }
    return lineNumbersOnly;
  };
  for (const m of scan(CANDIDATE, text)) {
    const digits = digitsOf(m[0]);
    if (digits.length < 13 || digits.length > 19) continue;
    if (!wellGrouped(m[0]) || !knownIssuer(digits) || !luhnValid(digits)) continue;
    const end = m.index + m[0].length;
    const bare = /^\d+$/.test(m[0]);
    // Bare digits after a key that names them as something else (gtin=, isbn:, order_id) are that thing;
    // thirteen bare digits (an EAN, or the rare old Visa length) need a word like card.
    const context = before(text, m.index, 24);
    if (bare && NOT_CARD.test(context)) continue;
    if (bare && digits.length === 13 && !CARD_CONTEXT.test(before(text, m.index, 60).split("\n").pop() ?? "")) continue;
    // A bare field of a line of numbers only (a CSV of ids, sizes and trace ids) is one more number.
    if (bare && onNumbersOnlyLine(m.index)) continue;
    // Part of a longer row of digit groups (a tracking number, a table): not a card.
    if (/^[ -]\d{4}/.test(text.slice(end, end + 5)) || /\d{4}[ -]$/.test(text.slice(Math.max(0, m.index - 5), m.index))) continue;
    out.push({ start: m.index, end });
  }
  return out;
}
