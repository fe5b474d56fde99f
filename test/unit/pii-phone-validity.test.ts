import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { describe, expect, it } from "vitest";
import { validPhoneDigits } from "../../src/features/pii/kinds/phone-validity.js";

/** A small deterministic generator, so a failure names numbers that can be checked again. */
function* numbers(seed: number, count: number): Generator<string> {
  let x = seed;
  for (let i = 0; i < count; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    yield String(x).padStart(10, "0") + String((x >> 7) % 100000);
  }
}

describe("PII phone validity", () => {
  it("agrees with libphonenumber-js's isValid on international numbers of many countries (without a trunk prefix)", () => {
    const prefixes = ["1", "44", "49", "33", "39", "34", "81", "86", "91", "61", "55", "7", "31", "46", "353", "972", "880", "800"];
    let checked = 0;
    for (const prefix of prefixes) {
      for (const rest of numbers(prefix.length * 7919 + Number(prefix), 300)) {
        for (const length of [8, 9, 10, 11, 12]) {
          const digits = prefix + rest.slice(0, length - prefix.length);
          const parsed = parsePhoneNumberFromString(`+${digits}`);
          // Stricter on purpose: no national trunk prefix after a country code (+1 1 516..., +44 0 20...).
          const expected = parsed !== undefined && parsed.isValid() && parsed.nationalNumber === digits.slice(parsed.countryCallingCode.length);
          expect(validPhoneDigits(digits, true), `+${digits}`).toBe(expected);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(20000);
  });

  it("agrees with libphonenumber-js's isValid on US numbers written without a country code", () => {
    for (const rest of numbers(4242, 3000)) {
      const digits = rest.slice(0, 10);
      expect(validPhoneDigits(digits, false), digits).toBe(parsePhoneNumberFromString(digits, "US")?.isValid() ?? false);
    }
  });
});
