// The other spellings code commonly prints a learnt value in: a phone, card or SSN without its
// separators, a phone's national digits, an IBAN in the other case; found again like the value itself.

import { parsePhoneNumberFromString } from "libphonenumber-js/max";

const SEPARATORS = /[\s\-.()/]/g;
/** Fewer digits than this are too common in machine data to be looked for without the separators. */
const MIN_DIGITS = 7;

export function variantsOf(type: string, value: string): string[] {
  const out = new Set<string>();
  if (type === "phone" || type === "ssn" || type === "credit_card") {
    const compact = value.replace(SEPARATORS, "");
    out.add(compact);
    if (type === "phone") {
      out.add(compact.replace(/^\+/, ""));
      const national = parsePhoneNumberFromString(value)?.nationalNumber;
      if (national) out.add(national);
    }
    for (const v of out) if (v.replace(/\D/g, "").length < MIN_DIGITS) out.delete(v);
  } else if (type === "iban") {
    const compact = value.replace(/\s/g, "");
    for (const v of [compact, value]) {
      out.add(v.toUpperCase());
      out.add(v.toLowerCase());
    }
  }
  out.delete(value);
  return [...out];
}
