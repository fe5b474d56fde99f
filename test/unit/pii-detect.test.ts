import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { compilePatterns, detectPii } from "../../src/features/pii/index.js";
import { DEFAULT_PII_TYPES, PII_TYPES } from "../../src/features/pii/types.js";
import { isSandgateError } from "../../src/errors/index.js";

/** Each value appears in a sentence of its own; the detector must find exactly it. */
const LABELLED: Record<string, { values: string[]; around: (value: string) => string }> = {
  email: {
    values: [
      "jane.doe@example.com", "ann.lee+news@mail.example.co.uk", "ops@eu-west.mail.acme.io", "josé@exämple.de",
      "用户@例子.广告", "John.Smith@Example.COM", "user123@test-domain.org", "first_last@company.net", "o'brien@example.ie",
      "eve@example.technology", "x-y@a-b.example.com", "billing%team@corp.example.org", "info@xn--bcher-kva.example", "ivan@example.xn--p1ai",
    ],
    around: (v) => `Please write to ${v}.`,
  },
  phone: {
    values: [
      "+44 20 7946 0958", "(415) 555-2671", "415.555.2671", "+49 30 901820", "415-555-2671", "+1 415 555 2671",
      "+1-415-555-2671", "+33 1 42 68 53 00", "+81 3-1234-5678", "+61 2 9374 4000", "+442079460958", "(212) 555-0199",
      "+91 98765 43210", "+34 912 345 678", "1-800-555-0199", "+1 (646) 555-3890", "(212)555-0199", "212-555-0199 x1234",
      "+1-212-555-0199x123", "212.555.0199 ext. 42", "001-212-555-0199", "0044 20 7946 0958",
    ],
    around: (v) => `You can reach the front desk on ${v} during office hours.`,
  },
  credit_card: {
    values: [
      "4111 1111 1111 1111", "4012888888881881", "5555 5555 5555 4444", "5105-1051-0510-5100", "2223 0031 2200 3222",
      "3782 822463 10005", "371449635398431", "6011 1111 1111 1117", "6011000990139424", "3530111333300000",
      "30569309025904", "4222222222222", "6759649826438453", "2200 1234 5678 9019", "6304 0000 0000 0000 018",
    ],
    around: (v) => `Charged to card ${v}, exp 12/27.`,
  },
  ssn: {
    values: ["123-45-6789", "219 09 9999", "536-22-1234", "001-01-0001", "772-11-4321"],
    around: (v) => `Employee record: ${v} (verified).`,
  },
  iban: {
    values: [
      "DE89 3704 0044 0532 0130 00", "GB29 NWBK 6016 1331 9268 19", "FR14 2004 1010 0505 0001 3M02 606",
      "ES91 2100 0418 4502 0005 1332", "NL91ABNA0417164300", "IT60 X054 2811 1010 0000 0123 456",
      "CH93 0076 2011 6238 5295 7", "BE68539007547034", "AT611904300234573201", "PL61 1090 1014 0000 0712 1981 2874",
    ],
    around: (v) => `Transfer the refund to ${v} by Friday.`,
  },
  ip_address: {
    values: [
      "192.168.1.20", "203.0.113.45", "10.0.0.12", "172.16.254.1", "2001:db8::8a2e:370:7334",
      "2001:0db8:85a3:0000:0000:8a2e:0370:7334", "fe80::1ff:fe23:4567:890a", "::ffff:192.0.2.128", "198.51.100.7", "fe80::1%eth0",
    ],
    around: (v) => `Login from ${v} was blocked.`,
  },
  name: {
    values: ["John Smith", "Mary K. Jones", "Dr. Okafor", "Ms. Elena Petrova", "Priya Natarajan", "Carlos Mendoza"],
    around: (v) => `The ticket was opened by ${v} yesterday.`,
  },
};

describe("PII detection per kind", () => {
  for (const [type, { values, around }] of Object.entries(LABELLED)) {
    it(`finds every ${type} in the labelled sentences, exactly where it is`, () => {
      for (const value of values) {
        const text = around(value);
        const found = detectPii(text, { types: PII_TYPES });
        expect(found, `${type}: ${text}`).toEqual([{ type, start: text.indexOf(value), end: text.indexOf(value) + value.length, value }]);
      }
    });
  }

  it("finds phone numbers as bare digits only when the text says they are phones", () => {
    expect(detectPii("order 4155552671 shipped", { types: ["phone"] })).toEqual([]);
    expect(detectPii("Mobile: 4155552671", { types: ["phone"] }).map((m) => m.value)).toEqual(["4155552671"]);
    expect(detectPii('{"contact_number": "14155552671"}', { types: ["phone"] }).map((m) => m.value)).toEqual(["14155552671"]);
  });

  it("finds nine bare digits as an SSN only after words like SSN", () => {
    expect(detectPii("batch 078051120 done", { types: ["ssn"] })).toEqual([]);
    expect(detectPii("SSN: 078051120", { types: ["ssn"] }).map((m) => m.value)).toEqual(["078051120"]);
    expect(detectPii("social security number 457555462", { types: ["ssn"] }).map((m) => m.value)).toEqual(["457555462"]);
  });

  it("finds values right after = or : as in logs, query strings and URIs", () => {
    const text = "client_ip=203.0.113.5 peer:198.51.100.7 tel:+14155552671 card=4111111111111111 SSN:123-45-6789 net=10.0.0.0/8 if=192.168.0.14/24";
    expect(detectPii(text, { types: PII_TYPES }).map((m) => m.value)).toEqual(["203.0.113.5", "198.51.100.7", "+14155552671", "4111111111111111", "123-45-6789", "192.168.0.14"]);
  });

  it("refuses numbers that fail their checksum or their issuer's rules", () => {
    const text = "card 4111 1111 1111 1112, iban DE88 3704 0044 0532 0130 00, ssn 666-12-3456 and 900-12-3456, phone 555-555-5555";
    expect(detectPii(text, { types: PII_TYPES })).toEqual([]);
  });

  it("does not take dotted version numbers for IP addresses", () => {
    const text = "upgrade to v1.2.3.4 (version 4.0.0.1, pkg@2.1.0.3, Version=6.0.0.0); loopback 127.0.0.1; client 81.2.69.160";
    expect(detectPii(text, { types: ["ip_address"] }).map((m) => m.value)).toEqual(["81.2.69.160"]);
  });

  it("reports several kinds in one text in order and never overlapping", () => {
    const text = "From ann@example.com (ip 203.0.113.9), card 4111111111111111, call +1 415 555 2671.";
    const found = detectPii(text, { types: DEFAULT_PII_TYPES });
    expect(found.map((m) => [m.type, m.value])).toEqual([
      ["email", "ann@example.com"],
      ["ip_address", "203.0.113.9"],
      ["credit_card", "4111111111111111"],
      ["phone", "+1 415 555 2671"],
    ]);
  });

  it("looks only for the kinds asked for", () => {
    const text = "ann@example.com 4111111111111111";
    expect(detectPii(text, { types: ["credit_card"] }).map((m) => m.type)).toEqual(["credit_card"]);
    expect(detectPii(text, { types: [] })).toEqual([]);
  });

  it("leaves names alone unless name is asked for", () => {
    expect(detectPii("Signed, John Smith", { types: DEFAULT_PII_TYPES })).toEqual([]);
    expect(detectPii("Signed, John Smith", { types: ["name"] }).map((m) => m.value)).toEqual(["John Smith"]);
    expect(detectPii("Meet at Elizabeth Street or Monday March", { types: ["name"] })).toEqual([]);
  });
});

describe("PII detection of the shapes third-party data is printed in", () => {
  /** Each value in a sentence of its own, as a labeller would mark it; the detector must find exactly it. */
  const labelled = (type: string, values: string[], around: (v: string) => string): void => {
    for (const value of values) {
      const text = around(value);
      const found = detectPii(text, { types: PII_TYPES }).map((m) => [m.type, m.value]);
      expect(found, text).toEqual([[type, value]]);
    }
  };

  it("finds national phone numbers of the common countries without a country code", () => {
    labelled(
      "phone",
      [
        "020 3123 4567", "0161 234 5678", "07911 123456", "030 12345678", "0176 12345678", "0211/1234567", "01 45 67 89 10",
        "07 81 23 45 67", "04.72.10.30.30", "010-4123456", "06-41234567", "655 12 34 56", "06 4567 8901", "348 765 4321",
        "080 4123 4567", "(03) 9123 4567", "0421 987 654", "1300 655 506", "011 2345 6789",
      ],
      (v) => `Customer service: ${v} (weekdays).`,
    );
  });

  it("finds international numbers whose range libphonenumber knows as possible though not assigned", () => {
    labelled("phone", ["+447700900731", "+44 (0)113 496 0321", "+49 (0)89 1234567", "+1 (283) 555-7812", "0033 1 45 67 89 10"], (v) => `ruft an: ${v}`);
    labelled("phone", ["(283) 555-7812", "370-555-0100 x44"], (v) => `Order desk ${v} is staffed.`);
  });

  it("finds Spanish-style numbers printed like amounts only when a word says they are phones", () => {
    expect(detectPii("Teléfono: 915 123 456", { types: ["phone"] }).map((m) => m.value)).toEqual(["915 123 456"]);
    expect(detectPii("Total 915 123 456 units", { types: ["phone"] })).toEqual([]);
  });

  it("leaves numbers alone that are dates, order or reference numbers, ISSNs, ZIP+4 codes and placeholders", () => {
    const text = [
      "ISSN 0378-5955, Order 2023-004512, ref: 0171 22, zip 10001-2345, \"zip\":\"30301-0042\", due 05-11-2024 and 2024 05 11,",
      "placeholders 777-777-7777, (888) 000-0000, 911-555-1234 and 123-456-7890, amount 912 345 678.",
    ].join("\n");
    expect(detectPii(text, { types: PII_TYPES })).toEqual([]);
  });

  it("finds numbers with 555 as area code, as fiction and generated data print them, but not N11 service codes", () => {
    expect(detectPii("Phone (555) 234-5678, not 311-234-5678", { types: ["phone"] }).map((m) => m.value)).toEqual(["(555) 234-5678"]);
  });

  it("leaves a serial number after its name and the columns of an aligned table alone", () => {
    const text = "Serial no. SN 0031-2345-6789\n  PID USER  PR  NI    VIRT    RES\n 4321 app   20   0 2345678 345678  23456 S\n";
    expect(detectPii(text, { types: PII_TYPES })).toEqual([]);
  });

  it("finds nine bare digits as an SSN right after SSN#", () => {
    expect(detectPii("SSN#401223344 on file", { types: ["ssn"] }).map((m) => m.value)).toEqual(["401223344"]);
    expect(detectPii("see #401223344", { types: ["ssn"] })).toEqual([]);
  });

  it("leaves the bytes of a hex dump alone", () => {
    const text = "00000010  7f 45 4c 46 02 01 01 00 00 00 00 00 00 00 00 00  |.ELF............|\n00000020  3e 00 01 00 00 00 60 10 00 00 00 00 00 00 00 40  |>.....`........@|";
    expect(detectPii(text, { types: PII_TYPES })).toEqual([]);
  });

  it("finds IBANs whose bank check digits do not hold, as generators print them, when mod-97 does", () => {
    labelled("iban", ["BE34310123456755", "FR46 3000 3012 3400 0123 4567 812", "PT72 0035 0000 1234 5678 9015 5"], (v) => `Pay to ${v}.`);
    expect(detectPii("Pay to BE35310123456755.", { types: ["iban"] })).toEqual([]);
  });

  it("finds an IP address in a URL, and no version in a lockfile's name (1.2.3.4) line or a constraint", () => {
    labelled("ip_address", ["10.20.30.40", "198.51.100.23"], (v) => `GET http://${v}:8080/metrics failed`);
    const text = "  specs:\n    grpc (1.62.0.1)\n      google-protobuf (~> 3.25.0.1)\n[assembly: AssemblyFileVersion(\"2.0.1.0\")]\npath lib/1.2.3.4/x";
    expect(detectPii(text, { types: ["ip_address"] })).toEqual([]);
  });

  it("finds 14-digit Diners Club cards starting 38, and leaves a numbers-only CSV row's long ids alone", () => {
    labelled("credit_card", ["38520000023237", "3852 000002 3237"], (v) => `Paid with ${v} yesterday.`);
    const csv = "span_id,start_ns,bytes,parent\n5301287644019273,1718000000123456789,20480,4012887644019273\n";
    expect(detectPii(csv, { types: PII_TYPES })).toEqual([]);
    expect(detectPii("name,card\nAnn,5301287644019273\n", { types: ["credit_card"] }).map((m) => m.value)).toEqual(["5301287644019273"]);
  });

  it("leaves bare digits named as something else (gtin=, order_id) alone, and needs a word for a card at thirteen digits", () => {
    const text = "gtin=4012887644019273 order_id: 5301287644019273 ean 4000000000006 sku 4000000000006";
    expect(detectPii(text, { types: ["credit_card"] })).toEqual([]);
    expect(detectPii("Visa on file, number 4000000000006.", { types: ["credit_card"] }).map((m) => m.value)).toEqual(["4000000000006"]);
  });

  // A tool result printed as one-line JSON: each match used to look at its whole line (49 s and 147 s a megabyte).
  it("scans a one-line megabyte of IP addresses or card numbers in one pass, finding each", { timeout: 15_000 }, () => {
    const ips = detectPii('{"ip":"10.0.0.1"},'.repeat(55_000), { types: ["ip_address"] });
    expect(ips).toHaveLength(55_000);
    const cards = detectPii('{"card":"4111111111111111"},'.repeat(37_000), { types: ["credit_card"] });
    expect(cards).toHaveLength(37_000);
  });
});

describe("PII custom patterns", () => {
  it("finds an admin's own kind by its name, after the built-in kinds", () => {
    const patterns = compilePatterns([{ name: "employee_id", regex: "\\bEMP-\\d{6}\\b" }, { name: "ticket", regex: "tkt_[a-z0-9]{8}", flags: "i" }]);
    const text = "EMP-004211 filed TKT_AB12CD34 for ann@example.com";
    const found = detectPii(text, { types: ["email", "employee_id", "ticket"], patterns });
    expect(found.map((m) => [m.type, m.value])).toEqual([
      ["employee_id", "EMP-004211"],
      ["ticket", "TKT_AB12CD34"],
      ["email", "ann@example.com"],
    ]);
    expect(detectPii(text, { types: ["email"], patterns }).map((m) => m.type)).toEqual(["email"]);
  });

  it("refuses a pattern that does not compile, naming it", () => {
    try {
      compilePatterns([{ name: "broken", regex: "(unclosed" }]);
      expect.unreachable();
    } catch (error) {
      expect(isSandgateError(error) && error.code).toBe("CONFIG_INVALID");
      expect((error as Error).message).toContain('"broken"');
    }
  });

  it("refuses a pattern with a repeated group that repeats itself, the shape of catastrophic backtracking", () => {
    for (const regex of ["(a+)+$", "(\\w*)*x", "((ab)+c?)*", "(x+){2,}"]) {
      expect(() => compilePatterns([{ name: "slow", regex }]), regex).toThrow(/slow.*exponential/);
    }
    expect(() => compilePatterns([{ name: "fine", regex: "(ab)+|[a-z]+(?:-\\d+)?" }])).not.toThrow();
  });

  // Each window of the run cost the backtracking engine its length squared: 13 s for these 2 MB.
  it("scans a long run that a plain pattern backtracks over at every position in one pass, and still finds its matches", { timeout: 6_000 }, () => {
    const patterns = compilePatterns([{ name: "handle", regex: "[a-z]+@[a-z]+" }]);
    const found = detectPii(`${"a".repeat(2_000_000)}\nmail ann@example today`, { types: ["handle"], patterns });
    expect(found.map((m) => m.value)).toEqual(["ann@example"]);
    // The pattern stays as fast as before on ordinary text.
    expect(detectPii("x ann@example y bob@host", { types: ["handle"], patterns }).map((m) => m.value)).toEqual(["ann@example", "bob@host"]);
  });

  it("finds custom matches across the cut between windows of a very long line", () => {
    const patterns = compilePatterns([{ name: "secret", regex: "SECRET-[0-9]{10}" }]);
    const text = `${"x".repeat(4090)}SECRET-0123456789${"y".repeat(9000)}SECRET-9876543210`;
    const found = detectPii(text, { types: ["secret"], patterns });
    expect(found.map((m) => [m.start, m.value])).toEqual([
      [4090, "SECRET-0123456789"],
      [4090 + 17 + 9000, "SECRET-9876543210"],
    ]);
  });
});

describe("PII detection on machine data", () => {
  const dir = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "pii");
  const files = readdirSync(dir).sort();

  it("has a corpus of lockfiles, logs, CSV, JSON and identifiers to check", () => {
    expect(files).toEqual(["Cargo.lock", "app-log.txt", "metrics.csv", "misc.txt", "package-lock.json", "poetry.lock", "system-dumps.txt", "tool-result.json", "yarn.lock"]);
  });

  for (const file of files) {
    it(`finds no personal data in ${file}, with every kind on (names too)`, () => {
      const text = readFileSync(join(dir, file), "utf8");
      const found = detectPii(text, { types: PII_TYPES });
      expect(found.map((m) => `${m.type}: ${m.value} in ${JSON.stringify(text.slice(Math.max(0, m.start - 30), m.end + 10))}`)).toEqual([]);
    });
  }
});
