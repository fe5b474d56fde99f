// A flood of output is saved as it is printed, with only its ends kept in memory (issue 22): the
// result shows what shaping all of it shows, the saved copy is every printed byte, masked, even
// when the call is killed mid-flood; and a stream under its inline size stays whole in memory.

import { describe, expect, it } from "vitest";
import { buildResult } from "../../src/execution/result-builder.js";
import { CallOutput, type OutputSink } from "../../src/sandbox/call-output.js";
import { useTestEngine } from "../helpers.js";

const fx = useTestEngine({}, { python: 1, javascript: 0, bash: 0 });

/** What the test's Python prints: numbered lines of `width` characters, some of them accented. */
function printedLines(count: number, width: number): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const label = `${String(i).padStart(7, "0")} ${i % 7 === 0 ? "é€" : "ab"} `;
    lines.push(label + "x".repeat(width - label.length));
  }
  return Buffer.from(lines.join("\n") + "\n", "utf8");
}
const PRINT_LINES = (count: number, width: number): string => `
import sys
out = sys.stdout
for i in range(${count}):
    label = f"{i:07d} {'é€' if i % 7 == 0 else 'ab'} "
    out.write(label + "x" * (${width} - len(label)) + "\\n")
`;

function savedId(uri: string): string {
  return uri.split("/").slice(-2)[0]!;
}

describe("an output flood", () => {
  it("of 9 MB returns the head and tail shaping all of it returns, and its saved copy is every printed byte", async () => {
    const printed = printedLines(90_000, 100);
    expect(printed.length).toBeGreaterThan(9_000_000);
    const r = await fx.engine.execute({ language: "python", code: PRINT_LINES(90_000, 100) });
    expect(r.status).toBe("ok");
    expect(r.truncated).toBe(true);
    const uri = r.fullOutput!.stdout!;
    const saved = await fx.engine.readSavedOutput(savedId(uri), "stdout");
    expect(saved.equals(printed)).toBe(true);
    // The same call's result as the whole bytes in memory give it.
    const whole = await buildResult(
      { status: "ok", exitCode: 0, stdout: printed, stderr: Buffer.alloc(0), durationMs: r.durationMs, sandboxDied: false },
      {
        displayBytes: fx.config.limits.maxOutputSize,
        outputTokenBudget: fx.config.codeMode.outputTokenBudget,
        sessionId: null,
        save: (stream) => ({ uri, restPath: `/outputs/${savedId(uri)}/${stream}` }),
      },
    );
    expect(r.stdout).toBe(whole.stdout);
    expect(r.outputNote).toBe(whole.outputNote);
    expect(r.tokens).toEqual(whole.tokens);
    expect(r.stdout.startsWith("0000000 é€ ")).toBe(true);
    expect(r.stdout.endsWith(`${printed.toString("utf8").slice(-101)}`)).toBe(true);
  });

  it("masks a secret split across two writes in its middle, in the saved copy too", async () => {
    const secret = "sk-live-0123456789abcdefSECRET";
    const code = `
import sys, time
out = sys.stdout.buffer
for i in range(30000): out.write(b"%07d filler line of the flood before the secret\\n" % i)
out.flush(); time.sleep(0.2)
out.write(b"key=" + "${secret.slice(0, 12)}".encode()); out.flush(); time.sleep(0.2)
out.write("${secret.slice(12)}".encode() + b" end\\n"); out.flush()
for i in range(30000): out.write(b"%07d filler line of the flood after the secret\\n" % i)
`;
    const r = await fx.engine.execute({ language: "python", env: { API_KEY: secret }, code });
    expect(r.status).toBe("ok");
    const saved = (await fx.engine.readSavedOutput(savedId(r.fullOutput!.stdout!), "stdout")).toString("utf8");
    expect(saved.length).toBeGreaterThan(2_500_000);
    expect(saved).toContain("key=[masked:API_KEY] end\n");
    expect(saved).not.toContain(secret.slice(0, 12));
    expect(saved).not.toContain(secret.slice(12));
    expect(r.stdout).not.toContain(secret.slice(0, 12));
  });

  it("killed at its time limit mid-flood still has its saved copy of everything printed before", async () => {
    const code = `
import sys, time
for i in range(40000): sys.stdout.write(f"{i:07d} printed before the call hangs\\n")
sys.stdout.flush()
time.sleep(60)
`;
    const r = await fx.engine.execute({ language: "python", timeoutS: 3, code });
    expect(r.status).toBe("timeout");
    const saved = (await fx.engine.readSavedOutput(savedId(r.fullOutput!.stdout!), "stdout")).toString("utf8");
    const expected = Array.from({ length: 40000 }, (_, i) => `${String(i).padStart(7, "0")} printed before the call hangs\n`).join("");
    expect(saved).toBe(expected);
  });

  it("stopped at the output cap has its saved copy of exactly the bytes up to the cap", async () => {
    const code = `
import sys
while True: sys.stdout.write("0123456789" * 6553 + "\\n")
`;
    const r = await fx.engine.execute({ language: "python", code });
    expect(r.status).toBe("output_limit");
    const saved = await fx.engine.readSavedOutput(savedId(r.fullOutput!.stdout!), "stdout");
    expect(saved.length).toBe(fx.config.limits.outputCapBytes);
    expect(saved.subarray(0, 20).toString()).toBe("01234567890123456789");
  });
});

describe("an output flood read back", () => {
  it("as one 3 MB JSON document is shaped as JSON from its saved copy, as the whole bytes are", async () => {
    const r = await fx.engine.execute({ language: "python", code: "import json\nprint(json.dumps([{'id': i, 'name': f'item {i}'} for i in range(100000)]))" });
    expect(r.status).toBe("ok");
    const uri = r.fullOutput!.stdout!;
    const saved = await fx.engine.readSavedOutput(savedId(uri), "stdout");
    expect(saved.length).toBeGreaterThan(3_000_000);
    const whole = await buildResult(
      { status: "ok", exitCode: 0, stdout: saved, stderr: Buffer.alloc(0), durationMs: r.durationMs, sandboxDied: false },
      { displayBytes: fx.config.limits.maxOutputSize, outputTokenBudget: fx.config.codeMode.outputTokenBudget, sessionId: null, save: (stream) => ({ uri, restPath: `/outputs/${savedId(uri)}/${stream}` }) },
    );
    expect(r.stdout).toBe(whole.stdout);
    expect(r.outputNote).toBe(whole.outputNote);
    expect(r.outputNote).toContain("still valid JSON");
  });
});

describe("an output flood larger than the saved-output store", () => {
  const small = useTestEngine({ SANDGATE_SAVED_OUTPUTS_MB: "1" }, { python: 1, javascript: 0, bash: 0 });

  it("is shown by its ends with a note that it was not kept, and the store keeps nothing of it", async () => {
    const r = await small.engine.execute({ language: "python", code: PRINT_LINES(30_000, 100) });
    expect(r.status).toBe("ok");
    expect(r.truncated).toBe(true);
    expect(r.fullOutput).toBeUndefined();
    expect(r.outputNote).toContain("larger than the saved-output store and was not kept");
    expect(r.stdout.startsWith("0000000 é€ ")).toBe(true);
    expect(r.stdout).toContain("0029999 ab ");
    expect(r.tokens.output).toBeGreaterThan(100_000);
  });
});

describe("a call's captured output", () => {
  /** A sink in memory that says it is behind once it holds more than `high` bytes. */
  function memorySink(high: number): OutputSink & { data: () => Buffer } {
    const chunks: Buffer[] = [];
    let queued = 0;
    return {
      write: (chunk) => {
        chunks.push(chunk);
        queued += chunk.length;
        return queued < high;
      },
      onDrain: (resume) => {
        queued = 0;
        resume();
      },
      end: () => Promise.resolve(),
      read: (start, end) => Promise.resolve(Buffer.concat(chunks).subarray(start, end)),
      data: () => Buffer.concat(chunks),
    };
  }

  it("keeps only the ends of a stream past its inline size, with its characters and lines counted, and slows down for its sink", async () => {
    const printed = printedLines(30_000, 100);
    const sink = memorySink(1 << 20);
    const pressure: boolean[] = [];
    const output = new CallOutput({
      capBytes: 10 << 20,
      spill: { inlineBytes: 1 << 20, keptBytes: 4096, open: () => sink },
      onPressure: (_, paused) => pressure.push(paused),
    });
    // Chunks cut anywhere, through multi-byte characters too.
    for (let at = 0; at < printed.length; at += 65_537) output.push("stdout", printed.subarray(at, at + 65_537));
    output.push("stderr", Buffer.from("a short stderr\n"));
    output.end();
    expect(output.bytesOf("stdout").length).toBe(0);
    expect(output.bytesOf("stderr").toString()).toBe("a short stderr\n");
    expect(output.spilled("stderr")).toBeUndefined();
    const spilled = output.spilled("stdout")!;
    expect(sink.data().equals(printed)).toBe(true);
    expect(spilled.length).toBe(printed.length);
    expect(spilled.chars).toBe(printed.toString("utf8").length);
    expect(spilled.newlines).toBe(30_000);
    expect(spilled.ends(0, 4096).equals(printed.subarray(0, 4096))).toBe(true);
    expect(spilled.ends(printed.length - 4096, printed.length).equals(printed.subarray(-4096))).toBe(true);
    expect(() => spilled.ends(10_000, 10_010)).toThrow(/not kept in memory/);
    expect((await spilled.read(10_000, 10_010)).equals(printed.subarray(10_000, 10_010))).toBe(true);
    expect(pressure).toContain(true);
    expect(pressure.at(-1)).toBe(false);
  });

  it("counts the lines of a flood of empty lines and of lines of every density exactly", () => {
    const sink = memorySink(64 << 20);
    const output = new CallOutput({ capBytes: 64 << 20, spill: { inlineBytes: 1 << 20, keptBytes: 4096, open: () => sink } });
    let expected = 0;
    // Empty lines, then chunks whose line ends thin out: below, at and above the point where counting changes method.
    output.push("stdout", Buffer.alloc(3 << 20, 10));
    expected += 3 << 20;
    for (const every of [1, 2, 63, 64, 65, 100, 1000, 70_000]) {
      const chunk = Buffer.alloc(65_536, 120);
      for (let i = every - 1; i < chunk.length; i += every) chunk[i] = 10;
      output.push("stdout", chunk);
      expected += Math.floor(chunk.length / every);
    }
    output.end();
    expect(output.spilled("stdout")!.newlines).toBe(expected);
  });
});
