// The other spellings code commonly prints a learnt value in: a phone, card or SSN without its
// separators, a phone's national digits, an IBAN in the other case, and any of them escaped in a URL
// (`%40`) or in ASCII-only JSON (`\u00f6`, Python's json.dumps); found again like the value itself.

import { parsePhoneNumberFromString } from "libphonenumber-js/max";

const SEPARATORS = /[\s\-.()/]/g;
/** Fewer digits than this are too common in machine data to be looked for without the separators. */
const MIN_DIGITS = 7;

export function variantsOf(type: string, value: string): string[] {
  const out = new Set<string>([value]);
  if (type === "phone" || type === "ssn" || type === "credit_card") {
    const compact = value.replace(SEPARATORS, "");
    out.add(compact);
    if (type === "phone") {
      out.add(compact.replace(/^\+/, ""));
      const national = parsePhoneNumberFromString(value)?.nationalNumber;
      if (national) out.add(national);
    }
    for (const v of out) if (v !== value && v.replace(/\D/g, "").length < MIN_DIGITS) out.delete(v);
  } else if (type === "iban") {
    const compact = value.replace(/\s/g, "");
    for (const v of [compact, value]) {
      out.add(v.toUpperCase());
      out.add(v.toLowerCase());
    }
  }
  for (const v of [...out]) for (const e of escapedForms(v)) out.add(e);
  out.delete(value);
  return [...out];
}

/** `value` as a URL's query holds it (encodeURIComponent, Python's quote, a form's `+` for a space) and as ASCII-only JSON. */
function escapedForms(value: string): string[] {
  let url: string;
  try {
    url = encodeURIComponent(value);
  } catch {
    return []; // a lone surrogate: no URL holds it
  }
  const out = [url, url.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`), url.replace(/%20/g, "+")];
  // Code units, not code points: JSON writes a character beyond the BMP as its two surrogates.
  if (/[\u0080-\uffff]/.test(value)) out.push(value.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));
  return out;
}
