import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DEFAULT_PII_TYPES, PII_TYPES, PiiVault } from "../../src/features/pii/index.js";

const ALL = { types: PII_TYPES };

describe("PII vault round trip", () => {
  const texts: Record<string, string> = {
    prose: "Hi, I'm John Smith (john.smith@example.com, +44 20 7946 0958). Card 4111 1111 1111 1111, SSN 123-45-6789.",
    "emoji before a match": "🎉🎉 launch party! RSVP to 🦄 party@example.org or 📞 (415) 555-2671 👍",
    "CRLF line ends": "name,email,ip\r\nann,ann@example.com,203.0.113.5\r\nbob,bob@example.com,2001:db8::8a2e:370:7334\r\n",
    "combining marks and CJK": "Zoë Ünal ｜ 用户@例子.广告 ｜ IBAN DE89 3704 0044 0532 0130 00 ｜ é",
    "a literal token already in the text": "Template: [EMAIL_1] and [PHONE_1] stay literal; the real one is real@example.com, +1 415 555 2671.",
    "the same value twice": "a@example.com, then a@example.com again, then b@example.com",
    "lone surrogates": "\ud800 x@example.com \udc00",
    "machine data": readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "pii", "package-lock.json"), "utf8"),
  };

  for (const [what, text] of Object.entries(texts)) {
    it(`gives back the input byte for byte: ${what}`, () => {
      const vault = new PiiVault();
      const tokenized = vault.tokenize(text, ALL);
      expect(vault.detokenizeText(tokenized.text)).toBe(text);
      expect(vault.detokenize({ [tokenized.text]: [tokenized.text] })).toEqual({ [text]: [text] });
    });
  }

  it("reports entities in code points of the input, so an emoji before a match counts once", () => {
    const text = "🎉 a@example.com";
    const { text: out, entities } = new PiiVault().tokenize(text, ALL);
    expect(out).toBe("🎉 [EMAIL_1]");
    expect(entities).toEqual([{ type: "email", token: "[EMAIL_1]", start: 2, end: 15 }]);
    expect([...text].slice(2, 15).join("")).toBe("a@example.com");
  });

  it("never issues a token whose literal text is already in the input", () => {
    const vault = new PiiVault();
    const { text, entities } = vault.tokenize("[EMAIL_1] [EMAIL_2] is a placeholder; write to ann@example.com", ALL);
    expect(entities.map((e) => e.token)).toEqual(["[EMAIL_3]"]);
    expect(text).toBe("[EMAIL_1] [EMAIL_2] is a placeholder; write to [EMAIL_3]");
    expect(vault.detokenizeText(text)).toBe("[EMAIL_1] [EMAIL_2] is a placeholder; write to ann@example.com");
  });

  it("keeps tokens stable across results and counts per kind", () => {
    const vault = new PiiVault();
    const first = vault.tokenize("ann@example.com called +1 415 555 2671", { types: DEFAULT_PII_TYPES });
    const second = vault.tokenize("+1 415 555 2671 and bob@example.com and ann@example.com", { types: DEFAULT_PII_TYPES });
    expect(first.text).toBe("[EMAIL_1] called [PHONE_1]");
    expect(second.text).toBe("[PHONE_1] and [EMAIL_2] and [EMAIL_1]");
    expect(second.counts).toEqual({ phone: 1, email: 2 });
    expect(vault.valueOf("[EMAIL_2]")).toBe("bob@example.com");
    expect(vault.detokenize({ to: "[EMAIL_2]", cc: ["[EMAIL_1]", "[EMAIL_9]"] })).toEqual({ to: "bob@example.com", cc: ["ann@example.com", "[EMAIL_9]"] });
  });
});
