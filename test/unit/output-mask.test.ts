// The output mask on its own: bytes, text, values and streamed chunks, including a secret split
// across chunks, secrets inside each other, and masks that must not be masked again.

import { describe, expect, it } from "vitest";
import { OutputMask } from "../../src/sandbox/index.js";
import { callRunEnv, checkEnv, SessionEnv } from "../../src/execution/env-vars.js";

const mask = OutputMask.of([
  { name: "API_KEY", value: "abcd1234efgh" },
  { name: "LONGER", value: "abcd1234efgh5678" },
  { name: "SHORT", value: "mask" },
])!;

/** The chunks masked as a sandbox masks its output as it comes: bytes, a secret split across chunks held back. */
function streamed(chunks: string[], by: OutputMask = mask): string {
  const stream = by.streamingBytes();
  const out = chunks.map((chunk) => stream.push(Buffer.from(chunk)));
  out.push(stream.flush());
  return Buffer.concat(out).toString("utf8");
}

describe("OutputMask", () => {
  it("masks the longest secret whole and never masks its own mask", () => {
    expect(mask.text("x abcd1234efgh5678 y abcd1234efgh z")).toBe("x [masked:LONGER] y [masked:API_KEY] z");
    // "[masked:...]" contains "mask": one pass leaves it alone.
    expect(mask.text("mask abcd1234efgh")).toBe("[masked:SHORT] [masked:API_KEY]");
  });

  it("masks bytes and leaves every other byte as it was, invalid UTF-8 included", () => {
    const data = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(" abcd1234efgh é "), Buffer.from([0xc3])]);
    const out = mask.bytes(data);
    expect(out.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xfe]));
    expect(out.subarray(2).toString("latin1")).toBe(Buffer.from(" [masked:API_KEY] é ").toString("latin1") + "\u00c3");
    const clean = Buffer.from("nothing here");
    expect(mask.bytes(clean)).toBe(clean);
  });

  it("masks strings and keys of a value at any depth it walks", () => {
    expect(mask.value({ "abcd1234efgh": ["abcd1234efgh", 1, null, { k: "mask" }] })).toEqual({ "[masked:API_KEY]": ["[masked:API_KEY]", 1, null, { k: "[masked:SHORT]" }] });
    let deep: unknown = "abcd1234efgh";
    for (let i = 0; i < 400; i++) deep = [deep];
    expect(JSON.stringify(mask.value(deep))).not.toContain("abcd1234efgh");
  });

  it("masks a secret split across streamed chunks, and lets a prefix that never completes through at the end", () => {
    expect(streamed(["x abcd", "1234", "efgh y"])).toBe("x [masked:API_KEY] y");
    expect(streamed(["abcd1234efgh", "5678"])).toBe("[masked:LONGER]");
    expect(streamed(["a", "b", "c", "d", "1234efgh!"])).toBe("[masked:API_KEY]!");
    expect(streamed(["ends with abcd12"])).toBe("ends with abcd12");
    expect(streamed(["abcd12", "xx"])).toBe("abcd12xx");
    // A secret that straddles where another could begin is masked whole, as in the joined text.
    const overlapping = OutputMask.of([
      { name: "A", value: "abcdef" },
      { name: "B", value: "efgh1234" },
    ])!;
    const out = streamed(["xabcdefg", "h1234"], overlapping);
    expect(out).toBe(overlapping.text("xabcdefgh1234"));
    expect(out).toBe("x[masked:A]gh1234");
  });

  it("is absent when no value is long enough to mask", () => {
    expect(OutputMask.of([{ name: "PIN", value: "123" }])).toBeUndefined();
    expect(OutputMask.of([])).toBeUndefined();
  });
});

describe("which variables are secret", () => {
  it("takes whole values of secret-looking names and secrets inside URLs, not plain settings", () => {
    const run = callRunEnv(
      checkEnv({ OPENAI_API_KEY: "sk-aaaa", DB_PASSWORD: "pw-1234", AUTH_COOKIE: "c00kie", DATABASE_URL: "postgres://u:hunter22@db/x", REGION: "eu-west-1", TOKEN_FILE: "/run/secret" }, "env"),
    );
    expect(run.secrets?.map((s) => `${s.name}=${s.value}`).sort()).toEqual(["AUTH_COOKIE=c00kie", "DATABASE_URL=hunter22", "DB_PASSWORD=pw-1234", "OPENAI_API_KEY=sk-aaaa"]);
  });

  it("a session remembers the secrets it was given, and forgets the oldest past its bound", () => {
    const env = new SessionEnv();
    env.set({ API_KEY: "first-secret" });
    env.set({ OTHER: "x" });
    expect(env.secrets).toEqual([{ name: "API_KEY", value: "first-secret" }]);
    for (let i = 0; i < 300; i++) env.remember([{ name: "K", value: `secret-${i}` }]);
    expect(env.secrets).toHaveLength(256);
    expect(env.secrets.at(-1)?.value).toBe("secret-299");
  });
});
