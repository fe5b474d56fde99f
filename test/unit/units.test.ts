// Pure pieces without a sandbox: frames, marker splitting, config from the environment,
// limit resolution and output shaping.

import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { shapeOutput } from "../../src/execution/index.js";
import { SavedOutputs } from "../../src/execution/saved-outputs.js";
import { resolveLimits } from "../../src/sandbox/index.js";
import { MarkerStream } from "../../src/sandbox/marker-stream.js";
import { encodeFrame, FrameDecoder, FrameProtocolError } from "../../src/sandbox/protocol.js";

function frame(obj: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(obj));
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
}

describe("frames", () => {
  it("decodes frames split at any byte and rejects invalid ones", () => {
    const bytes = Buffer.concat([frame({ type: "ready", language: "python", pid: 2 }), frame({ type: "result", id: "r1", ok: true, exitCode: 0 })]);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const d = new FrameDecoder();
      const got = [...d.push(bytes.subarray(0, cut)), ...d.push(bytes.subarray(cut))];
      expect(got.map((f) => f.type)).toEqual(["ready", "result"]);
    }
    expect(() => new FrameDecoder().push(frame({ type: "result", id: 5 }))).toThrow(FrameProtocolError);
    const huge = Buffer.alloc(4);
    huge.writeUInt32BE(0xffffffff);
    expect(() => new FrameDecoder().push(huge)).toThrow(/exceeds/);
  });

  it("encodes execute frames with a big-endian length prefix", () => {
    const buf = encodeFrame({ type: "execute", id: "e", code: "π", marker: "m", filename: "main.py" });
    expect(buf.readUInt32BE(0)).toBe(buf.length - 4);
    expect(JSON.parse(buf.subarray(4).toString())).toMatchObject({ code: "π" });
  });
});

describe("marker stream", () => {
  it("finds a marker split across chunks and counts, but drops, bytes written between calls", () => {
    const seen: string[] = [];
    const s = new MarkerStream((c) => seen.push(c.toString()));
    s.begin(Buffer.from("<END>"));
    expect(s.push(Buffer.from("hello <E"))).toBe(false);
    expect(s.push(Buffer.from("ND>late"))).toBe(true);
    expect(s.push(Buffer.from("later"))).toBe(false);
    expect(seen.join("")).toBe("hello ");
    s.begin(Buffer.from("<END2>"));
    expect(s.push(Buffer.from("next<END2>"))).toBe(true);
    expect(seen.join("")).toBe("hello next");
    expect(s.discardedBytes).toBe("late".length + "later".length);
  });
});

describe("config", () => {
  it("reads the documented environment variables and refuses malformed ones", () => {
    const c = loadConfig({ MAX_EXECUTION_TIME: "5", MAX_MEMORY_MB: "128", MAX_OUTPUT_SIZE: "1000", SANDBOX_DIR: "/tmp/x", SANDGATE_POOL: "python=3,bash=0" });
    expect(c.limits).toMatchObject({ maxExecutionTimeS: 5, maxMemoryMb: 128, maxOutputSize: 1000 });
    expect(c.pool).toEqual({ python: 3, javascript: 1, bash: 0 });
    expect(() => loadConfig({ MAX_MEMORY_MB: "lots" })).toThrow(/MAX_MEMORY_MB/);
    expect(() => loadConfig({ SANDGATE_POOL: "ruby=2" })).toThrow(/SANDGATE_POOL/);
    expect(() => loadConfig({ MAX_MEMORY_MB: "4" })).toThrow(/limits.maxMemoryMb/);
  });

  it("caps flavors at the admin maximum and refuses overrides above it", () => {
    const c = loadConfig({ MAX_MEMORY_MB: "256", MAX_EXECUTION_TIME: "30" });
    expect(resolveLimits(c, { flavor: "large" }).memoryMb).toBe(256);
    expect(resolveLimits(c, { flavor: "small" }).memoryMb).toBe(256);
    expect(resolveLimits(c, { timeoutS: 2 }).timeoutMs).toBe(2000);
    expect(() => resolveLimits(c, { timeoutS: 31 })).toThrow(expect.objectContaining({ code: "LIMIT_EXCEEDED" }) as Error);
    expect(() => resolveLimits(c, { memoryMb: -1 })).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }) as Error);
  });
});

describe("output shaping", () => {
  it("keeps head and tail within the budget and names the saved output's resource and REST path", () => {
    const data = Buffer.from(Array.from({ length: 1000 }, (_, i) => `row ${i}`).join("\n"));
    const shaped = shapeOutput(data, 400, () => ({ uri: "sandgate://outputs/x/stdout", restPath: "/outputs/x/stdout" }));
    expect(shaped.truncated).toBe(true);
    expect(shaped.fullOutput).toBe("sandgate://outputs/x/stdout");
    expect(shaped.text.startsWith("row 0\n")).toBe(true);
    expect(shaped.text.endsWith("row 999")).toBe(true);
    expect(shaped.text).toContain("saved as sandgate://outputs/x/stdout (REST: GET /outputs/x/stdout)");
    expect(shapeOutput(data, 400, () => undefined).text).toContain("was not kept");
    expect(shapeOutput(Buffer.from("short"), 400, () => undefined)).toEqual({ text: "short", truncated: false, totalBytes: 5 });
  });
});

describe("marker stream streaming", () => {
  it("passes ordinary output through at once and holds back only a possible marker start", () => {
    const seen: string[] = [];
    const s = new MarkerStream((c) => seen.push(c.toString()));
    s.begin(Buffer.from("\u0000END\u0000"));
    s.push(Buffer.from("tick 0\n"));
    expect(seen).toEqual(["tick 0\n"]);
    s.push(Buffer.from("tick 1\n\u0000EN"));
    expect(seen.join("")).toBe("tick 0\ntick 1\n");
    expect(s.push(Buffer.from("D\u0000"))).toBe(true);
    expect(seen.join("")).toBe("tick 0\ntick 1\n");
  });
});

describe("saved outputs", () => {
  it("keep the total under the cap oldest first, the biggest keeper's first, answer only their owner, and go when expired", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-outputs-"));
    const store = new SavedOutputs({ dir: join(dir, "outputs"), ttlMs: 3600_000, capBytes: 1000 });
    try {
      const ids = Array.from({ length: 5 }, (_, i) => store.begin("alice").add("stdout", Buffer.alloc(300, 48 + i))!.id);
      await store.settled();
      expect(store.bytes).toBeLessThanOrEqual(1000);
      expect(readdirSync(join(dir, "outputs")).sort()).toEqual(ids.slice(2).sort());
      expect((await store.read(ids[4]!, "stdout", "alice")).toString()).toBe("4".repeat(300));
      await expect(store.read(ids[4]!, "stdout", "bob")).rejects.toMatchObject({ code: "OUTPUT_NOT_FOUND" });
      await expect(store.read(ids[4]!, "stderr", "alice")).rejects.toMatchObject({ code: "OUTPUT_NOT_FOUND" });
      await expect(store.read(ids[0]!, "stdout", "alice")).rejects.toMatchObject({ code: "OUTPUT_NOT_FOUND" });
      await expect(store.read("../../etc/passwd", "stdout", "alice")).rejects.toMatchObject({ code: "OUTPUT_NOT_FOUND" });
      expect(store.begin("alice").add("stdout", Buffer.alloc(1001))).toBeUndefined();
      // Bob's one output outlives Alice's floods: the caller keeping the most gives way first.
      const bobs = store.begin("bob").add("stderr", Buffer.from("bob's"))!.id;
      for (let i = 0; i < 6; i++) store.begin("alice").add("stdout", Buffer.alloc(300));
      await store.settled();
      expect(store.bytes).toBeLessThanOrEqual(1000);
      expect((await store.read(bobs, "stderr", "bob")).toString()).toBe("bob's");
      store.prune(Date.now() + 3601_000);
      await store.settled();
      expect(store.bytes).toBe(0);
      expect(existsSync(join(dir, "outputs", ids[4]!))).toBe(false);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
