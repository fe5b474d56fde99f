// Phone numbers: runs of digits in a phone's shape, confirmed by libphonenumber-js's full metadata:
// international with + or 00, US shapes, or national numbers of the common countries (leading 0...).

import { nanpPlausible, plausiblePhoneDigits, validNationalDigits, validPhoneDigits } from "./phone-validity.js";
import { before, digitsOf, scan, type Span } from "./span.js";

/**
 * Digit groups joined by one separator each (`+44 20 7946 0958`, `(415) 555-2671`, `030/901820`),
 * and an extension (`x123`, ` ext. 12`) kept with the number.
 */
const RUN = /(?<![\w+.\-/@#])(?:\+ ?)?(?:\(\d{1,5}\) ?)?\d{1,15}(?:(?:[ .\-\u00a0/]|\) ?| ?\()\d{1,10}){0,6}((?: ?(?:x|ext\.?|extension) ?)\d{1,6})?(?![\w\-/@]|[.,:]\d)/gi;
/** `001-541-754-3010`, `0044 20 7946 0958`, `011 44 20...`: an exit code instead of `+`. */
const EXIT_CODE = /^(?:00|011[ .-])(?=[1-9])/;
/** Words that say a number is a phone, in the languages of the common national formats. */
const CONTEXT =
  /(?:phone|\btel\b|\btel\.|\bt[eé]l[eé]?f|\btél|\bmobil|\bm[oó]vil|\bcell|\bportable|\bhandy|\bfax|\bcall|whatsapp|\bsms|\bdial|\bph\b|\bph\.|\bmob\b|\bcontact|\breach|hotline|\bll[aá]m|\bchiam|\bappel)[^\d\n]{0,16}$/;
const US_GROUPS = new Set(["3,3,4", "1,3,3,4", "10", "11"]);
const DOTTED_US = /^(?:\+?1[ .])?\(?\d{3}\)?\.\d{3}\.\d{4}$/;
/** France and Belgium print pairs with dots: 01.42.68.53.00. */
const DOTTED_PAIRS = /^0\d(?:\.\d\d){4}$/;
/** A slash only after an area code: 030/901820. */
const SLASHED = /^\(?0\d{1,5}\)?\/\d[\d -]*$/;
/** Words that name a number as something else just before it: `Order 2024-000123`, `Serial number: SN 0042-1234-5678`. */
const NOT_PHONE =
  /(?:\b(?:order|invoice|inv|ref|reference|id|no|nr|account|acct|tracking|sku|po|ticket|case|isbn|issn|serial|pin|zip|postcode)\b(?: (?:number|no\.?|nr\.?|id))?|#)[ .:#="'-]{0,4}(?:[a-z]{1,3}[ .:#-]{1,2})?$/;
const DATE = /^(?:\d{1,2}[-/. ]\d{1,2}[-/. ]\d{2,4}|\d{4}[-/. ]\d{1,2}[-/. ]\d{1,2})$/;
/** 912 345 678 is also how some print an amount: without a country code it needs a word like "phone". */
const THOUSANDS = /^\d{1,3}(?:[ .,\u00a0]\d{3})+$/;

export function findPhones(text: string): Span[] {
  const out: Span[] = [];
  for (const m of scan(RUN, text)) {
    const value = m[1] === undefined ? m[0] : m[0].slice(0, m[0].length - m[1].length);
    if (value.includes("(") !== value.includes(")")) continue;
    if (value.includes("/") && !SLASHED.test(value)) continue;
    const exit = EXIT_CODE.exec(value);
    const international = value.startsWith("+") || exit !== null;
    // `+44 (0)20 7946 0958`: the trunk 0 printed for national callers is not dialled from abroad.
    const body = (exit === null ? value : value.slice(exit[0].length)).replace(international ? "(0)" : "", "");
    const digits = digitsOf(body);
    if (digits.length < 7 || digits.length > 15) continue;
    // 999-999-9999, 000-0000: a placeholder, not someone's number.
    if (/^(\d)\1{6}$/.test(digits.slice(-7))) continue;
    const separated = /[ .\-\u00a0()/]/.test(value);
    const context = CONTEXT.test(before(text, m.index, 32));
    // A bare run of digits is an id, a timestamp or a count unless the text says it is a phone.
    if (!separated && !international && !context) continue;
    // Dots also join versions, dates and addresses: only the US 3.3.4 and the French pairs count.
    if (value.includes(".") && !international && !DOTTED_US.test(value) && !DOTTED_PAIRS.test(value)) continue;
    // Only a + makes a number international beyond doubt: 0042-1234-5678 may be a serial number.
    const plus = value.startsWith("+");
    if (!plus && (DATE.test(value) || (!context && NOT_PHONE.test(lineBefore(text, m.index, 24))))) continue;
    const end = m.index + m[0].length;
    // One more number of a row of numbers (a table, a hex dump) is not a phone.
    if (/^[ \t]+\d/.test(text.slice(end, end + 9)) || /\d[ \t]+$/.test(text.slice(Math.max(0, m.index - 9), m.index))) continue;
    if (inHexRow(text, m.index, end)) continue;
    // `011 3186339` is Turin or Delhi when 011 does not lead to a country (the US exit code).
    const accepted = international
      ? plausiblePhoneDigits(digits) || (exit !== null && !value.startsWith("00") && nationalPhone(value, digitsOf(value), separated, context))
      : nationalPhone(value, digits, separated, context);
    if (!accepted) continue;
    out.push({ start: m.index, end });
  }
  return out;
}

/** The `width` characters before `start`, from its line only, lower-cased. */
function lineBefore(text: string, start: number, width: number): string {
  return before(text, start, width).split("\n").pop() ?? "";
}

/** Next to a byte of a hex dump (`3a 01 48 45 79 f4`): two hex characters with a digit, or on both sides. */
function inHexRow(text: string, start: number, end: number): boolean {
  const previous = /(?:^|\s)([0-9A-Fa-f]{2})[ \t]$/.exec(text.slice(Math.max(0, start - 4), start))?.[1];
  const next = /^[ \t]([0-9A-Fa-f]{2})(?:\s|$)/.exec(text.slice(end, end + 4))?.[1];
  const byte = (s: string | undefined): boolean => s !== undefined && /\d/.test(s);
  return byte(previous) || byte(next) || (previous !== undefined && next !== undefined);
}

/** A number printed without a country code: a US shape, else a national number of a common country. */
function nationalPhone(value: string, digits: string, separated: boolean, context: boolean): boolean {
  const groups = value.match(/\d+/g)?.map((g) => g.length).join() ?? "";
  if (US_GROUPS.has(groups)) {
    const national = digits.length === 11 && digits.startsWith("1") ? digits.slice(1) : digits;
    if (validPhoneDigits(digits, false) || (separated && nanpPlausible(national))) return true;
    // In the US shape but not a US number (911-555-1234): no other country's number either.
    if (!digits.startsWith("0")) return false;
  }
  // 123-45-6789 and 94107-1234 are the shapes of an SSN and a ZIP+4 code, not of a phone.
  if (groups === "3,2,4" || groups === "5,4") return false;
  if (!digits.startsWith("0") && ((!context && THOUSANDS.test(value)) || !/^(?:[36-9]|1[38])/.test(digits))) return false;
  return validNationalDigits(digits);
}
