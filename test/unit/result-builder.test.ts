// Result building without a sandbox: raw run outcomes in, what a caller sees out (shortened
// stdout with the saved-output URI that reads back the full text, token counts, error fields).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunOutcome } from "../../src/sandbox/index.js";
import { parseSavedOutputUri, SavedOutputs, savedOutputRestPath } from "../../src/execution/saved-outputs.js";
import { buildResult, markWorkspaceOverLimit, preparationFailedResult, type BuildResultOptions, type SaveOutput } from "../../src/execution/result-builder.js";
import { shapeText } from "../../src/execution/shaping.js";
import { countTokens } from "../../src/execution/tokens.js";

const OWNER = "tester";
let dir: string;
let outputs: SavedOutputs;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-results-"));
  outputs = new SavedOutputs({ dir, ttlMs: 60_000, capBytes: 4 * 1048576 });
});

afterEach(async () => {
  await outputs.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Saves into the real store, as the engine does for each call. */
function saver(store: SavedOutputs = outputs): SaveOutput {
  const saved = store.begin(OWNER);
  return (stream, data) => {
    const kept = saved.add(stream, data);
    return kept && { uri: kept.uri, restPath: savedOutputRestPath(kept.id, stream) };
  };
}

function outcome(fields: Partial<RunOutcome> = {}): RunOutcome {
  return { status: "ok", exitCode: 0, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), durationMs: 12.3456789, sandboxDied: false, ...fields };
}

function options(fields: Partial<BuildResultOptions> = {}): BuildResultOptions {
  return { displayBytes: 65_536, outputTokenBudget: 4000, sessionId: null, save: saver(), ...fields };
}

type ResultFrame = NonNullable<RunOutcome["result"]>;

function frame(fields: Partial<ResultFrame>): ResultFrame {
  return { type: "result", id: "r1", ok: true, exitCode: 0, ...fields };
}

async function readBack(uri: string | undefined): Promise<string> {
  const parsed = parseSavedOutputUri(uri ?? "");
  expect(parsed).toBeDefined();
  return (await outputs.read(parsed!.id, parsed!.stream, OWNER)).toString("utf8");
}

function logLines(count: number): string {
  return Array.from({ length: count }, (_, i) => `12:00:${String(i % 60).padStart(2, "0")} INFO worker-${i % 7} finished job ${i}`).join("\n");
}

describe("buildResult", () => {
  it("shows short output whole, with equal returned and output token counts and no error", async () => {
    const result = await buildResult(outcome({ stdout: Buffer.from("hello\n"), stderr: Buffer.from("warn\n") }), options({ sessionId: "s1" }));
    expect(result).toMatchObject({ status: "ok", exitCode: 0, stdout: "hello\n", stderr: "warn\n", truncated: false, sessionId: "s1", toolCalls: [] });
    expect(result.error).toBeUndefined();
    expect(result.fullOutput).toBeUndefined();
    expect(result.outputNote).toBeUndefined();
    expect(result.durationMs).toBe(12.346);
    expect(result.tokens).toEqual({ returned: countTokens("hello\n") + countTokens("warn\n"), output: countTokens("hello\n") + countTokens("warn\n"), toolResults: 0 });
  });

  it("shortens stdout over the token budget and saves the full text under a URI that reads it back", async () => {
    const text = logLines(3000);
    const result = await buildResult(outcome({ stdout: Buffer.from(text) }), options({ outputTokenBudget: 500 }));
    expect(result.truncated).toBe(true);
    expect(result.stdout.length).toBeLessThan(text.length);
    expect(result.stdout.startsWith("12:00:00 INFO worker-0 finished job 0")).toBe(true);
    expect(result.fullOutput?.stdout).toMatch(/^sandgate:\/\/outputs\/[A-Za-z0-9_-]{24}\/stdout$/);
    expect(result.outputNote).toContain(result.fullOutput!.stdout!);
    expect(result.outputNote).toContain("REST: GET /outputs/");
    expect(await readBack(result.fullOutput?.stdout)).toBe(text);
    expect(result.tokens.output).toBeGreaterThan(result.tokens.returned);
    expect(result.tokens.returned).toBeLessThanOrEqual(600);
  });

  it("keeps the head and tail of stderr longer than the display bytes and saves the whole of it", async () => {
    const stderr = `START ${"x".repeat(20_000)} END`;
    const result = await buildResult(outcome({ status: "error", exitCode: 1, stderr: Buffer.from(stderr) }), options({ displayBytes: 1000 }));
    expect(result.stderr.startsWith("START")).toBe(true);
    expect(result.stderr.endsWith("END")).toBe(true);
    expect(result.stderr).toMatch(/bytes omitted; full output \(20010 bytes\) saved as sandgate:\/\/outputs\//);
    expect(result.truncated).toBe(true);
    expect(await readBack(result.fullOutput?.stderr)).toBe(stderr);
    expect(result.fullOutput?.stdout).toBeUndefined();
  });

  it("says the full output was not kept when it is larger than the whole store", async () => {
    const tiny = new SavedOutputs({ dir: join(dir, "tiny"), ttlMs: 60_000, capBytes: 100 });
    try {
      const result = await buildResult(outcome({ stdout: Buffer.from("y".repeat(5000)) }), options({ displayBytes: 500, save: saver(tiny) }));
      expect(result.truncated).toBe(true);
      expect(result.fullOutput).toBeUndefined();
      expect(result.stdout + (result.outputNote ?? "")).toContain("larger than the saved-output store and was not kept");
    } finally {
      await tiny.close();
    }
  });

  it("names the limit a run hit as the error type when the runner sent no error", async () => {
    const cases = [
      ["timeout", "Timeout"],
      ["memory_limit", "MemoryLimit"],
      ["output_limit", "OutputLimit"],
      ["killed", "Killed"],
    ] as const;
    for (const [status, type] of cases) {
      const result = await buildResult(outcome({ status, exitCode: null, message: `stopped: ${status}` }), options());
      expect(result.status).toBe(status);
      expect(result.error).toEqual({ type, message: `stopped: ${status}`, traceback: "" });
      expect(result.truncated).toBe(status === "output_limit");
    }
    expect((await buildResult(outcome({ status: "timeout", exitCode: null }), options())).error?.message).toBe("timeout");
  });

  it("reports a runner that exited without a result as RunnerExited, and the runner's own error as it came", async () => {
    const exited = await buildResult(outcome({ status: "error", exitCode: 3, message: "the runner exited with code 3" }), options());
    expect(exited.error).toEqual({ type: "RunnerExited", message: "the runner exited with code 3", traceback: "" });
    const raised = { type: "ZeroDivisionError", message: "division by zero", traceback: "Traceback ...\nZeroDivisionError: division by zero" };
    const failed = await buildResult(outcome({ status: "error", exitCode: 1, message: "ignored", result: frame({ ok: false, exitCode: 1, error: raised }) }), options());
    expect(failed.error).toEqual(raised);
    expect((await buildResult(outcome({ status: "error", exitCode: 1 }), options())).error).toBeUndefined();
  });

  it("returns a small value as it is and counts its tokens", async () => {
    const result = await buildResult(outcome({ result: frame({ value: { answer: 42 } }) }), options());
    expect(result.value).toEqual({ answer: 42 });
    expect(result.truncated).toBe(false);
    expect(result.tokens.returned).toBe(result.tokens.output);
    expect(result.tokens.returned).toBeGreaterThan(0);
  });

  it("shortens a value over the token budget to valid JSON and says so in the note", async () => {
    const rows = Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `user ${i}`, email: `u${i}@example.com` }));
    const result = await buildResult(outcome({ result: frame({ value: rows }) }), options({ outputTokenBudget: 300 }));
    expect(result.truncated).toBe(true);
    expect(Array.isArray(result.value)).toBe(true);
    expect((result.value as unknown[]).length).toBeLessThan(rows.length);
    expect(JSON.parse(JSON.stringify(result.value))).toEqual(result.value);
    expect(result.outputNote).toMatch(/^value /);
    expect(result.tokens.output).toBeGreaterThan(result.tokens.returned);
  });

  it("replaces a value nested deeper than 256 levels with a note instead of overflowing", async () => {
    let deep: unknown = 0;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    const result = await buildResult(outcome({ result: frame({ value: deep }) }), options());
    expect(result.value).toBe("[a value nested more than 256 levels deep, not shown]");
    expect(result.truncated).toBe(true);
  });

  it("lists the code's upstream calls and counts their results as tokens kept in the sandbox", async () => {
    const toolCalls = { calls: [{ tool: "github.search_issues", ok: true, durationMs: 5 }], tokensInSandbox: 1234 };
    const result = await buildResult(outcome({ stdout: Buffer.from("3 issues\n") }), options({ toolCalls }));
    expect(result.toolCalls).toEqual(toolCalls.calls);
    expect(result.tokens.toolResults).toBe(1234);
  });
});

describe("buildResult of megabytes of output", () => {
  /** ~10 MB of `line(i)` lines, as a run printing in a loop makes. */
  const print = (line: (i: number) => string): string => {
    const lines: string[] = [];
    for (let i = 0, size = 0; size < 10_000_000; i++) size += lines[lines.push(line(i)) - 1]!.length + 1;
    return lines.join("\n") + "\n";
  };

  it("lets other work on the event loop run while it shapes a 10 MB print, many times over", async () => {
    const text = print((i) => `row ${i} [EMAIL_1] lorem ipsum dolor sit amet`);
    let turns = 0;
    let done = false;
    const others = (async () => {
      while (!done) await new Promise<void>((resolve) => setImmediate(() => resolve(void turns++)));
    })();
    const shaping = buildResult(outcome({ stdout: Buffer.from(text) }), options());
    const result = await shaping;
    done = true;
    await others;
    expect(turns).toBeGreaterThan(5);
    expect(result.truncated).toBe(true);
  });

  const printers: Array<[string, () => string]> = [
    ["lines", () => print((i) => `row ${i} [EMAIL_1] lorem ipsum dolor sit amet`)],
    ["one line of words", () => "lorem ipsum dolor sit amet [EMAIL_2] ".repeat(270_000)],
  ];
  it.each(printers)("shows the same head, tail, marker and token counts of a 10 MB print of %s as shaping it whole", async (_, printed) => {
    const text = printed();
    const whole = shapeText(text, { budgetTokens: 4000 });
    const result = await buildResult(outcome({ stdout: Buffer.from(text) }), options());
    expect(result.stdout).toBe(whole.text);
    expect(result.stdout.startsWith(text.slice(0, 200))).toBe(true);
    expect(result.stdout.endsWith(text.slice(-200))).toBe(true);
    expect(result.stdout).toMatch(/\n… [\d,]+ (lines|characters) \(about [\d,]+ tokens\) cut …\n/);
    expect(result.tokens).toEqual({ returned: whole.tokens, output: whole.originalTokens, toolResults: 0 });
    expect(result.tokens.returned).toBeLessThanOrEqual(4000);
    expect(result.outputNote).toContain(whole.note);
  });

  it("counts the lines and characters it cut from a print of accented text and emoji as shaping it whole does", async () => {
    const text = print((i) => `ligne ${i} : café crème, déjà vu 🙂 — fin`);
    const whole = shapeText(text, { budgetTokens: 4000 });
    const result = await buildResult(outcome({ stdout: Buffer.from(text) }), options());
    const cut = (shown: string): string | undefined => /… ([\d,]+ lines) \(/.exec(shown)?.[1];
    expect(cut(result.stdout)).toBe(cut(whole.text));
    expect(result.stdout.split("… ")[0]).toBe(whole.text.split("… ")[0]);
    expect(result.stdout.endsWith(text.slice(-300))).toBe(true);
    expect(result.tokens.output / whole.originalTokens).toBeCloseTo(1, 1);
  });

  it("estimates the tokens of 10 MB of stderr it shows shortened", async () => {
    const stderr = print((i) => `warning ${i}: deprecated call`);
    const result = await buildResult(outcome({ stderr: Buffer.from(stderr) }), options());
    expect(result.stderr.startsWith("warning 0: deprecated call")).toBe(true);
    // Every line alike: the tokens of its first 100,000 characters, scaled, are its tokens.
    expect(result.tokens.output / ((countTokens(stderr.slice(0, 100_000)) * stderr.length) / 100_000)).toBeCloseTo(1, 1);
  });
});

describe("markWorkspaceOverLimit", () => {
  it("turns a successful call into a WorkspaceLimit error", async () => {
    const result = await buildResult(outcome(), options());
    markWorkspaceOverLimit(result, "the workspace holds more than 10 MB");
    expect(result.status).toBe("error");
    expect(result.error).toEqual({ type: "WorkspaceLimit", message: "the workspace holds more than 10 MB", traceback: "" });
  });

  it("keeps the call's own status and names its own error in the message", async () => {
    const result = await buildResult(outcome({ status: "timeout", exitCode: null, message: "timed out after 5 s" }), options());
    markWorkspaceOverLimit(result, "the workspace holds more than 10 MB");
    expect(result.status).toBe("timeout");
    expect(result.error?.type).toBe("WorkspaceLimit");
    expect(result.error?.message).toBe("the workspace holds more than 10 MB (the call itself ended with Timeout: timed out after 5 s)");
  });
});

describe("preparationFailedResult", () => {
  it("reports code that failed before running as an error whose traceback is stderr", () => {
    const error = { type: "SyntaxError", message: "Unexpected token", traceback: "main.ts(1,5): error TS1005: ';' expected." };
    const result = preparationFailedResult(error, "s1");
    expect(result).toMatchObject({ status: "error", exitCode: 1, stdout: "", stderr: error.traceback, error, sessionId: "s1", truncated: false, durationMs: 0 });
    expect(result.tokens).toEqual({ returned: countTokens(error.traceback), output: countTokens(error.traceback), toolResults: 0 });
  });
});
