// The boundary vault on its own: exact values found again longest first, tokens swapped back only
// where the vault issued them, and a cap on the values one vault holds.

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { isSandgateError } from "../../src/errors/index.js";
import { BoundaryVault, compilePatterns } from "../../src/features/pii/index.js";

const EMAIL = { types: ["email"] };

describe("BoundaryVault", () => {
  it("replaces every known value verbatim, the longest one first, without detectors", () => {
    const vault = new BoundaryVault();
    vault.learn(["ann@example.com", "joann@example.com"], EMAIL);
    expect(vault.tokenizeText("to joann@example.com, cc ann@example.com; ann@example.com again")).toBe("to [EMAIL_2], cc [EMAIL_1]; [EMAIL_1] again");
  });

  it("round-trips byte for byte: tokenize then detokenize gives the text back", () => {
    const vault = new BoundaryVault();
    const text = "é ann@example.com — 🎉 bob@example.org\n";
    vault.learn(text, EMAIL);
    const tokens = vault.tokenizeText(text);
    expect(tokens).toBe("é [EMAIL_1] — 🎉 [EMAIL_2]\n");
    expect(vault.detokenize({ m: tokens, list: [tokens, "[EMAIL_9]"] })).toEqual({ m: text, list: [text, "[EMAIL_9]"] });
  });

  it("finds every one of many known values that share their first characters", () => {
    const vault = new BoundaryVault();
    const values = Array.from({ length: 20_000 }, (_, i) => `user${i}@example.com`);
    vault.learn(values, EMAIL);
    const text = values.filter((_, i) => i % 97 === 0).join(", ");
    const out = vault.tokenizeText(text);
    expect(out).not.toContain("@");
    expect(vault.detokenize(out)).toBe(text);
  });

  it("never issues a token that the tool result itself wrote literally", () => {
    const vault = new BoundaryVault();
    vault.learn("send [EMAIL_1] to ann@example.com", EMAIL);
    const out = vault.tokenizeText("send [EMAIL_1] to ann@example.com");
    expect(out).toBe("send [EMAIL_1] to [EMAIL_2]");
    expect(vault.detokenize(out)).toBe("send [EMAIL_1] to ann@example.com");
  });

  // Each repetition used to parse the phone again for its other spellings: 18 s for these 10 MB (an upstream message at its cap), holding the server.
  // The timeout catches a pass that grows with the square of the matches (hours here), not a slow
  // machine: a few seconds alone, and 15 s was seen on two cores busy with the server tier.
  it("learns a tool result repeating one phone number across megabytes in one linear pass", { timeout: 60_000 }, () => {
    const vault = new BoundaryVault();
    const counts = vault.learn("Tel. 020 7946 0958, ".repeat(500_000), { types: ["phone"] });
    expect(counts).toEqual({ phone: 500_000 });
    expect(vault.size).toBe(1);
    // Its other spelling was learnt all the same.
    expect(vault.tokenizeText("call 02079460958")).toMatch(/^call \[PHONE_\d\]$/);
  });

  it("keeps the values it learns, not the large tool results they were found in", () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    const vault = new BoundaryVault();
    for (let i = 0; i < 20; i++) {
      // A 10 MB document with one address in it: a slice of it would keep all of it alive.
      const text = `${"x".repeat(5_000_000 + i)} user${i}@example.com ${"y".repeat(5_000_000)}`;
      vault.learn({ content: [{ type: "text", text }] }, EMAIL);
      expect(vault.tokenizeText(`mail user${i}@example.com`)).toBe(`mail [EMAIL_${i + 1}]`);
    }
    gc();
    expect(vault.size).toBe(20);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(20_000_000);
  });

  it("counts a long value by its length against its cap: a tool result of long custom matches cannot fill memory", () => {
    const account = { types: ["acct"], patterns: compilePatterns([{ name: "acct", regex: "ACCT-[0-9A-F]+" }]) };
    const vault = new BoundaryVault(1_000);
    // 4,000 characters each: as one value apiece, a full vault of them would hold 400 MB.
    const long = Array.from({ length: 100 }, (_, i) => `ACCT-${i.toString(16).toUpperCase().padStart(4, "0")}${"F".repeat(3_991)}`);
    vault.learn(long.join("\n"), account);
    expect(vault.tokenizeText(long[0]!)).toBe("[ACCT_1]");
    expect(vault.tokenizeText(long[99]!, account)).toBe("[ACCT_REDACTED]");
    expect(vault.size).toBeLessThan(20);
    // Short values still count once each.
    const emails = Array.from({ length: 900 }, (_, i) => `u${i}@example.com`);
    const short = new BoundaryVault(1_000);
    short.learn(emails.join(" "), EMAIL);
    expect(short.size).toBe(900);
  });

  it("never sends back to a tool a token that a later tool result wrote as text", () => {
    const vault = new BoundaryVault();
    vault.learn("ann@example.com", EMAIL);
    expect(vault.detokenize("to [EMAIL_1]")).toBe("to ann@example.com");
    vault.learn({ note: "forward to [EMAIL_1] and [EMAIL_2]" }, EMAIL);
    expect(vault.detokenize("to [EMAIL_1]")).toBe("to [EMAIL_1]");
    // The value keeps its token on the way out; a new value skips the number the tool data wrote.
    vault.learn("bob@example.com", EMAIL);
    expect(vault.tokenizeText("ann@example.com bob@example.com")).toBe("[EMAIL_1] [EMAIL_3]");
    expect(vault.detokenize("[EMAIL_3]")).toBe("bob@example.com");
  });

  it("refuses to swap back tokens that would grow a tool call's arguments by megabytes, instead of building them", () => {
    const vault = new BoundaryVault();
    const email = `${"a".repeat(64)}@${"b".repeat(60)}.${"c".repeat(60)}.example.com`;
    vault.learn(email, EMAIL);
    // A 9 MB frame of tokens would become 180 MB of arguments.
    const flood = { message: "[EMAIL_1]".repeat(1_000_000) };
    let error: unknown;
    try {
      vault.detokenize(flood);
    } catch (caught) {
      error = caught;
    }
    expect(isSandgateError(error) && error.code === "LIMIT_EXCEEDED" ? error.message : error).toMatch(/more than 4 MiB/);
    // Ordinary arguments with many tokens still go through.
    expect(vault.detokenize({ to: Array.from({ length: 1_000 }, () => "[EMAIL_1]") }).to[999]).toBe(email);
  });

  it("holds at most its cap of values: new ones past it are masked, never kept", () => {
    const vault = new BoundaryVault(2);
    vault.learn("a1@example.com a2@example.com a3@example.com", EMAIL);
    expect(vault.size).toBe(2);
    expect(vault.tokenizeText("a1@example.com a3@example.com", EMAIL)).toBe("[EMAIL_1] [EMAIL_REDACTED]");
    expect(vault.size).toBe(2);
  });
});
