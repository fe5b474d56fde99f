// Payment card numbers: 13 to 19 digits, bare or in the printed groups (4-4-4-4, Amex 4-6-5), with a
// known issuer prefix for their length and a valid Luhn checksum. Ids that fail either pass untouched.

import { luhnValid } from "./luhn.js";
import { digitsOf, scan, type Span } from "./span.js";

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
  { from: 38, to: 39, lengths: [16, 17, 18, 19] }, // Diners Club
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

export function findCreditCards(text: string): Span[] {
  const out: Span[] = [];
  for (const m of scan(CANDIDATE, text)) {
    const digits = digitsOf(m[0]);
    if (digits.length < 13 || digits.length > 19) continue;
    if (!wellGrouped(m[0]) || !knownIssuer(digits) || !luhnValid(digits)) continue;
    const end = m.index + m[0].length;
    // Part of a longer row of digit groups (a tracking number, a table): not a card.
    if (/^[ -]\d{4}/.test(text.slice(end, end + 5)) || /\d{4}[ -]$/.test(text.slice(Math.max(0, m.index - 5), m.index))) continue;
    out.push({ start: m.index, end });
  }
  return out;
}
