// IBANs: a country code, two check digits and exactly that country's length of characters, printed
// in groups of four or not, confirmed by ibantools (country format and the mod-97 check).

import { getCountrySpecifications, validateIBAN, ValidationErrorsIBAN } from "ibantools";
import { scan, type Span } from "./span.js";

const START = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?= ?[A-Z0-9])/g;
const LENGTHS: ReadonlyMap<string, number> = new Map(
  Object.entries(getCountrySpecifications()).flatMap(([country, spec]) => (spec.chars ? [[country, spec.chars] as const] : [])),
);

/** The IBAN starting at `start`, spaces allowed only between groups of four, or undefined. */
function read(text: string, start: number, length: number): { end: number; iban: string } | undefined {
  let iban = "";
  let i = start;
  while (iban.length < length && i < text.length) {
    const c = text[i] ?? "";
    if (c === " " && iban.length % 4 === 0 && iban.length > 0 && text[i - 1] !== " ") {
      i++;
      continue;
    }
    if (!/[A-Z0-9]/.test(c)) return undefined;
    iban += c;
    i++;
  }
  if (iban.length !== length || /[A-Za-z0-9]/.test(text[i] ?? "")) return undefined;
  return { end: i, iban };
}

/**
 * Country format and mod-97 must hold; a bank's own account check digits (Belgium, Spain, France...)
 * may not: generators and test data compute only the IBAN's, and the IBAN is still someone's account.
 */
function validIban(iban: string): boolean {
  return validateIBAN(iban).errorCodes.every((code) => code === ValidationErrorsIBAN.WrongAccountBankBranchChecksum);
}

export function findIbans(text: string): Span[] {
  const out: Span[] = [];
  for (const m of scan(START, text)) {
    const length = LENGTHS.get(m[0].slice(0, 2));
    if (length === undefined) continue;
    const found = read(text, m.index, length);
    if (found === undefined || !validIban(found.iban)) continue;
    out.push({ start: m.index, end: found.end });
    START.lastIndex = found.end;
  }
  return out;
}
