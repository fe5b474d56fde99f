// Whether digits make a valid phone number, by libphonenumber-js's full metadata and the rules of its
// isValid(), with each pattern compiled once: isValid builds a RegExp per check (20-150 µs a number).

import { Metadata } from "libphonenumber-js/max";

/** The part of libphonenumber-js's runtime Metadata used here (its typings declare less than it has). */
interface NumberType {
  pattern(): string;
  possibleLengths(): number[] | undefined;
}
interface NumberingPlan {
  nationalNumberPattern(): string;
  leadingDigits(): string | undefined;
  hasTypes(): boolean;
  type(name: string): NumberType | undefined;
}
interface RuntimeMetadata {
  selectNumberingPlan(countryOrCallingCode: string): unknown;
  numberingPlan: NumberingPlan;
  hasCallingCode(callingCode: string): boolean;
  getCountryCodesForCallingCode(callingCode: string): string[] | undefined;
}

const TYPES = ["FIXED_LINE", "MOBILE", "PREMIUM_RATE", "TOLL_FREE", "SHARED_COST", "VOIP", "PERSONAL_NUMBER", "PAGER", "UAN", "VOICEMAIL"];
const metadata = new (Metadata as unknown as new () => RuntimeMetadata)();
const compiled = new Map<string, RegExp>();

function regex(source: string): RegExp {
  let re = compiled.get(source);
  if (re === undefined) {
    re = new RegExp(source);
    compiled.set(source, re);
  }
  return re;
}

const entirely = (text: string, pattern: string): boolean => regex(`^(?:${pattern})$`).test(text);

/** Valid in the numbering plan selected: its national pattern, then one of its number types. */
function validInPlan(national: string): boolean {
  const plan = metadata.numberingPlan;
  if (!entirely(national, plan.nationalNumberPattern())) return false;
  if (!plan.hasTypes()) return true;
  return TYPES.some((name) => {
    const type = plan.type(name);
    const pattern = type?.pattern();
    if (!type || !pattern) return false;
    const lengths = type.possibleLengths();
    return (!lengths || lengths.includes(national.length)) && entirely(national, pattern);
  });
}

/** `+` and the digits after it (country calling code first), or `1` and ten digits for the US default. */
export function validPhoneDigits(digits: string, international: boolean): boolean {
  if (!international) {
    const national = digits.length === 11 && digits.startsWith("1") ? digits.slice(1) : digits;
    return national.length === 10 && validForCallingCode("1", national);
  }
  // Country calling codes are prefix-free: at most one of the first 1-3 digits is one.
  for (let n = 1; n <= 3; n++) {
    const callingCode = digits.slice(0, n);
    if (metadata.hasCallingCode(callingCode)) return validForCallingCode(callingCode, digits.slice(n));
  }
  return false;
}

function validForCallingCode(callingCode: string, national: string): boolean {
  if (national.length < 4 || national.length > 14) return false;
  const countries = metadata.getCountryCodesForCallingCode(callingCode);
  if (countries === undefined) {
    metadata.selectNumberingPlan(callingCode); // a non-geographic code (+800, +882...)
    return validInPlan(national);
  }
  // As libphonenumber picks the country of a shared code: a country with leading digits when they
  // match, one without when the number has one of its types.
  for (const country of countries) {
    metadata.selectNumberingPlan(country);
    const leading = metadata.numberingPlan.leadingDigits();
    if (leading) {
      if (regex(`^(?:${leading})`).test(national)) return validInPlan(national);
    } else if (validInPlan(national)) return true;
  }
  return false;
}
