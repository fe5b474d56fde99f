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
  possibleLengths(): number[];
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

/**
 * `+` and digits that libphonenumber calls possible though perhaps not valid: a known calling code and
 * a national number of that plan's pattern and lengths. Fictional ranges (UK 07700 900xxx) and area
 * codes not yet assigned are numbers all the same when a `+` says so.
 */
export function plausiblePhoneDigits(digits: string): boolean {
  for (let n = 1; n <= 3; n++) {
    const callingCode = digits.slice(0, n);
    if (!metadata.hasCallingCode(callingCode)) continue;
    const national = digits.slice(n);
    if (validForCallingCode(callingCode, national)) return true;
    if (callingCode === "1") return nanpPlausible(national);
    // The main country of a shared calling code (the US for +1, the UK for +44).
    metadata.selectNumberingPlan(metadata.getCountryCodesForCallingCode(callingCode)?.[0] ?? callingCode);
    const plan = metadata.numberingPlan;
    return plan.possibleLengths().includes(national.length) && entirely(national, plan.nationalNumberPattern());
  }
  return false;
}

/**
 * NANP's own rule for a number whose area code is not assigned yet: area code and exchange start with
 * 2-9, and the area code is not an N11 service code (911). 555 as an area code counts: fiction and test
 * data use it, and tokenizing a made-up number costs nothing while missing a real one leaks it.
 */
export function nanpPlausible(national: string): boolean {
  if (!/^[2-9]\d\d[2-9]\d{6}$/.test(national)) return false;
  return national.slice(1, 3) !== "11";
}

/** Calling codes of the common countries whose national numbers start with a trunk 0 that is not dialled from abroad. */
const TRUNK_ZERO = ["44", "49", "33", "31", "91", "61", "32", "43", "41", "353", "46", "64", "81", "27", "358"];
/** Countries without a trunk prefix whose national numbers are commonly printed alone: Spain, Italy, India's mobiles, Australia's 13/1300/1800. */
const NO_TRUNK = ["34", "39", "91", "61"];

/**
 * Digits printed without a country code, valid in one of the common numbering plans: with a leading
 * 0, the trunk prefix of the UK, Germany, France... (Italy keeps its 0); without, Spain, Italy or India.
 */
export function validNationalDigits(digits: string): boolean {
  if (digits.startsWith("0")) {
    if (digits.startsWith("00")) return false;
    const national = digits.slice(1);
    return TRUNK_ZERO.some((code) => validForCallingCode(code, national)) || validForCallingCode("39", digits);
  }
  // Italy without its 0 and India without its trunk prefix: mobiles only (3..., 6-9...); Australia: 13 numbers.
  const only: Record<string, RegExp> = { "91": /^[6-9]/, "61": /^1[38]/ };
  return NO_TRUNK.some((code) => (only[code]?.test(digits) ?? true) && validForCallingCode(code, digits));
}
