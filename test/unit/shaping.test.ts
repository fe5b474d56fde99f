// Token counting and output shaping: counts agree with gpt-tokenizer's o200k_base, and shaped
// output stays within the budget, keeps head and tail, and stays valid JSON when it was JSON.

import { describe, expect, it } from "vitest";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { shapeText, shapeValue } from "../../src/execution/shaping.js";
import { countJsonTokens, countTokens } from "../../src/execution/tokens.js";

const PLAIN = { disallowedSpecial: new Set<string>() };
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function users(count: number): { id: number; name: string; email: string; tags: string[] }[] {
  return Array.from({ length: count }, (_, i) => ({ id: i, name: `user ${i}`, email: `u${i}@example.com`, tags: ["a", "b"] }));
}

function logLines(count: number): string {
  const line = (i: number): string => `12:00:${String(i % 60).padStart(2, "0")} INFO worker-${i % 7} finished job ${i} in ${i % 900} ms`;
  return Array.from({ length: count }, (_, i) => line(i)).join("\n");
}

describe("countTokens", () => {
  it("agrees with the o200k_base encoder", () => {
    const samples = [
      "hello world",
      "Ünïcödé text, 東京は日本の首都です。 😀👍🏽 and a tab\tand CRLF\r\n",
      JSON.stringify({ id: 1, nested: { list: [1, 2, 3], text: "don't stop" } }, null, 2),
      "word ".repeat(40_000),
    ];
    for (const sample of samples) expect(countTokens(sample)).toBe(encode(sample, PLAIN).length);
    expect(countTokens("")).toBe(0);
  });

  it("counts special-token text as plain text instead of throwing", () => {
    const text = "before <|endoftext|> after";
    expect(countTokens(text)).toBe(encode(text, PLAIN).length);
  });

  it("counts very long runs of one character class quickly and closely", () => {
    const run = "=".repeat(5000);
    expect(Math.abs(countTokens(run) - encode(run, PLAIN).length)).toBeLessThanOrEqual(5000 / 128);
    expect(countTokens("a".repeat(1_000_000))).toBeGreaterThan(0);
  });

  it("counts JSON values as their JSON text and strings as themselves", () => {
    const value = { a: [1, 2, 3], b: "text" };
    expect(countJsonTokens(value)).toBe(encode(JSON.stringify(value)).length);
    expect(countJsonTokens("plain words")).toBe(encode("plain words").length);
    expect(countJsonTokens(undefined)).toBe(0);
  });
});

describe("shapeText", () => {
  it("returns input within the budget unchanged", () => {
    const text = "short output\n";
    const tokens = countTokens(text);
    expect(shapeText(text, { budgetTokens: 100 })).toEqual({ text, truncated: false, tokens, originalTokens: tokens });
  });

  it("summarizes a 2 MB JSON array into valid JSON within the budget", () => {
    const text = JSON.stringify(users(20_000).map((user) => ({ ...user, bio: "x".repeat(40) })));
    expect(text.length).toBeGreaterThan(2_000_000);
    const shaped = shapeText(text, { budgetTokens: 4000 });
    expect(shaped.truncated).toBe(true);
    expect(shaped.tokens).toBeLessThanOrEqual(4000);
    expect(countTokens(shaped.text)).toBe(shaped.tokens);
    const value = JSON.parse(shaped.text) as unknown[];
    expect(value[0]).toMatchObject({ id: 0 });
    expect(value.at(-1)).toMatchObject({ id: 19_999 });
    expect(value.find((item) => typeof item === "string")).toMatch(/more items \(of 20,000\)/);
    expect(shaped.text).not.toContain("\n");
    expect(shaped.note).toMatch(/^output shortened from (about )?[\d,]+ to [\d,]+ tokens, still valid JSON: 1 array shortened/);
  });

  it("keeps pretty-printed JSON pretty", () => {
    const text = JSON.stringify(users(2000), null, 2);
    const shaped = shapeText(text, { budgetTokens: 1000 });
    expect(shaped.tokens).toBeLessThanOrEqual(1000);
    expect(shaped.originalTokens).toBe(countTokens(text));
    expect(shaped.text.startsWith('[\n  {\n    "id": 0,')).toBe(true);
    expect(JSON.parse(shaped.text)).toBeInstanceOf(Array);
  });

  it("cuts a long string inside JSON in the middle", () => {
    const text = JSON.stringify({ id: 7, body: `START${"lorem ipsum ".repeat(50_000)}END😀` });
    const shaped = shapeText(text, { budgetTokens: 300 });
    const value = JSON.parse(shaped.text) as { id: number; body: string };
    expect(shaped.tokens).toBeLessThanOrEqual(300);
    expect(value.id).toBe(7);
    expect(value.body).toMatch(/^START.*… \[[\d,]+ characters cut\] ….*END😀$/s);
    expect(shaped.note).toContain("1 long string cut in the middle");
  });

  it("keeps the head and tail lines of a 50,000-line log around a marker line", () => {
    const text = logLines(50_000);
    const shaped = shapeText(text, { budgetTokens: 2000 });
    expect(shaped.tokens).toBeLessThanOrEqual(2000);
    const lines = shaped.text.split("\n");
    expect(lines[0]).toBe("12:00:00 INFO worker-0 finished job 0 in 0 ms");
    expect(lines.at(-1)).toBe(text.slice(text.lastIndexOf("\n") + 1));
    const marker = lines.find((line) => line.startsWith("…"));
    expect(marker).toMatch(/^… [\d,]+ lines \((about )?[\d,]+ tokens\) cut …$/);
    const kept = lines.filter((line) => !line.startsWith("…"));
    expect(kept.every((line) => text.includes(`${line}\n`) || text.endsWith(line))).toBe(true);
    const cut = Number(/([\d,]+) lines/.exec(marker ?? "")?.[1]?.replaceAll(",", ""));
    expect(kept.length + cut).toBe(50_000);
    expect(shaped.note).toMatch(/^output shortened from (about )?[\d,]+ to [\d,]+ tokens: kept the first [\d,]+ and last [\d,]+ lines$/);
    expect(kept.length).toBeGreaterThan(40);
  });

  it("cuts on line boundaries when the output ends with a newline or uses CRLF", () => {
    for (const text of [`${logLines(20_000)}\n`, `${logLines(20_000).replaceAll("\n", "\r\n")}\r\n`]) {
      const shaped = shapeText(text, { budgetTokens: 1000 });
      expect(shaped.tokens).toBeLessThanOrEqual(1000);
      expect(shaped.text).toMatch(/\n… [\d,]+ lines \((about )?[\d,]+ tokens\) cut …\n12:00/);
      expect(shaped.text.endsWith(text.slice(text.lastIndexOf("\n", text.length - 2) + 1))).toBe(true);
      expect(shaped.note).toMatch(/lines$/);
    }
  });

  it("cuts a single 1 MB line by characters", () => {
    const text = `BEGIN ${"0123456789 abcdef ".repeat(58_000)} FINISH`;
    const shaped = shapeText(text, { budgetTokens: 1500 });
    expect(shaped.tokens).toBeLessThanOrEqual(1500);
    expect(shaped.text.startsWith("BEGIN 0123456789")).toBe(true);
    expect(shaped.text.endsWith("abcdef  FINISH")).toBe(true);
    expect(shaped.text).toMatch(/[\da-f]\n… [\d,]+ characters \((about )?[\d,]+ tokens\) cut …\n[\da-f]/);
    expect(shaped.note).toMatch(/kept the first [\d,]+ and last [\d,]+ characters$/);
  });

  it("never throws and never splits a surrogate pair", () => {
    const inputs = ["", "\n".repeat(100_000), "😀".repeat(300_000), "\uD800 lone \uDC00".repeat(20_000)];
    inputs.push("[1, 2", '"a', "é".repeat(50_000), "a\r\n".repeat(100_000));
    for (const text of inputs) {
      for (const budgetTokens of [0, 1, 50, 500, Number.NaN]) {
        const shaped = shapeText(text, { budgetTokens });
        if (text.length > 0 && !LONE_SURROGATE.test(text)) expect(shaped.text).not.toMatch(LONE_SURROGATE);
        if (budgetTokens >= 50) expect(shaped.tokens).toBeLessThanOrEqual(budgetTokens);
      }
    }
  });

  it("keeps JSON valid even with a tiny budget", () => {
    for (const budgetTokens of [0, 5, 30, 300]) {
      for (const text of [JSON.stringify(users(1000)), JSON.stringify("x y ".repeat(50_000))]) {
        const shaped = shapeText(text, { budgetTokens });
        expect(() => JSON.parse(shaped.text) as unknown).not.toThrow();
        if (budgetTokens >= 30) expect(shaped.tokens).toBeLessThanOrEqual(budgetTokens);
      }
    }
  });
});

describe("shapeValue", () => {
  it("returns a small value itself", () => {
    const value = { a: 1 };
    expect(shapeValue(value, { budgetTokens: 100 }).value).toBe(value);
  });

  it("shapes big values into plain JSON data within the budget", () => {
    const value: Record<string, unknown> = { count: 10n, list: users(3000), when: new Date(0) };
    value.self = value;
    const shaped = shapeValue(value, { budgetTokens: 400 });
    expect(shaped.truncated).toBe(true);
    expect(shaped.tokens).toBeLessThanOrEqual(400);
    expect(countJsonTokens(shaped.value)).toBe(shaped.tokens);
    expect(shaped.value).toMatchObject({ count: "10", self: "[Circular]", when: "1970-01-01T00:00:00.000Z" });
    expect(shaped.note).toContain("the longest had 3,000 items");
  });

  it("shapes a string value as text", () => {
    const shaped = shapeValue(logLines(10_000), { budgetTokens: 500 });
    expect(typeof shaped.value).toBe("string");
    expect(shaped.tokens).toBeLessThanOrEqual(500);
  });

  it("survives getters and toJSON methods that throw", () => {
    const fail = (): never => {
      throw new Error("no");
    };
    const hostile = {
      get boom(): never {
        return fail();
      },
      list: Array.from({ length: 5000 }, (_, i) => ({ i, bad: { toJSON: fail } })),
    };
    const shaped = shapeValue(hostile, { budgetTokens: 200 });
    expect(shaped.tokens).toBeLessThanOrEqual(200);
    expect(JSON.stringify(shaped.value)).toContain("[unreadable]");
  });
});
