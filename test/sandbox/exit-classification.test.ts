// How a call ended, as the pure exit classification decides it: one row per case, no sandbox needed.

import { describe, expect, it } from "vitest";
import { RUNNER_SPECS } from "../../src/languages/index.js";
import { classifyExit, classifyInterrupted, classifyResult, describeExit, type CallVerdict, type ExitFacts } from "../../src/sandbox/exit-classification.js";
import type { ResultFrame } from "../../src/sandbox/protocol.js";

const died: ExitFacts = {
  exit: { code: null, signal: "SIGKILL" },
  killReason: undefined,
  stopMessage: "",
  oomKilled: false,
  stderrTail: "",
  runner: RUNNER_SPECS.python,
  timeoutMs: 2500,
  outputCapBytes: 1000,
  memoryMb: 256,
  launchErr: "",
};

const V8_OOM = "<--- Last few GCs --->\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n";

const exitRows: Array<[string, Partial<ExitFacts>, CallVerdict]> = [
  ["a timeout the host enforced", { killReason: "timeout" }, { status: "timeout", exitCode: null, message: "execution timed out after 2.5 s and was stopped" }],
  [
    "a timeout whose interrupt the code did not stop for",
    { killReason: "timeout", interruptGraceMs: 2000 },
    { status: "timeout", exitCode: null, message: "execution timed out after 2.5 s and was stopped; it did not stop within 2 s of an interrupt, so the interpreter was killed and its state is lost" },
  ],
  [
    "a cancel whose interrupt the code did not stop for",
    { killReason: "killed", interruptGraceMs: 2000 },
    { status: "killed", exitCode: null, message: "the sandbox was stopped; it did not stop within 2 s of an interrupt, so the interpreter was killed and its state is lost" },
  ],
  ["an output flood", { killReason: "output_limit" }, { status: "output_limit", exitCode: null, message: "output exceeded 1000 bytes and the run was stopped" }],
  ["a stop by the caller", { killReason: "killed" }, { status: "killed", exitCode: null, message: "the sandbox was stopped" }],
  ["a stop for a broken bound, with its message", { killReason: "stopped", stopMessage: "the sandbox broke the runner protocol" }, { status: "killed", exitCode: null, message: "the sandbox broke the runner protocol" }],
  ["the host's reason over an OOM kill it caused", { killReason: "timeout", oomKilled: true }, { status: "timeout", exitCode: null, message: "execution timed out after 2.5 s and was stopped" }],
  ["an OOM kill the cgroup counted", { oomKilled: true }, { status: "memory_limit", exitCode: null, message: "memory limit of 256 MB reached; the process was killed" }],
  ["an OOM kill of the runner inside bubblewrap", { oomKilled: true, exit: { code: 137, signal: null } }, { status: "memory_limit", exitCode: null, message: "memory limit of 256 MB reached; the process was killed" }],
  [
    "an exit with a status while the shared cgroup counted another runner's OOM kill",
    { oomKilled: true, exit: { code: 3, signal: null } },
    { status: "error", exitCode: 3, message: "the runner exited unexpectedly (exit status 3)" },
  ],
  [
    "Node's abort at its heap limit",
    { runner: RUNNER_SPECS.javascript, exit: { code: 134, signal: null }, stderrTail: V8_OOM },
    { status: "memory_limit", exitCode: null, message: "memory limit of 256 MB reached; the process was killed" },
  ],
  [
    "an abort without V8's message",
    { runner: RUNNER_SPECS.javascript, exit: { code: 134, signal: null }, stderrTail: "Aborted\n" },
    { status: "killed", exitCode: null, message: "the runner exited unexpectedly (exit status 134, killed by signal 6)" },
  ],
  [
    "V8's message from a runner whose abort is not a memory limit",
    { runner: RUNNER_SPECS.python, exit: { code: 134, signal: null }, stderrTail: V8_OOM },
    { status: "killed", exitCode: null, message: "the runner exited unexpectedly (exit status 134, killed by signal 6)" },
  ],
  ["the CPU time limit (SIGXCPU)", { exit: { code: 152, signal: null } }, { status: "timeout", exitCode: null, message: "CPU time limit reached; the process was stopped" }],
  ["a runner that exited with a status", { exit: { code: 3, signal: null } }, { status: "error", exitCode: 3, message: "the runner exited unexpectedly (exit status 3)" }],
  ["bubblewrap killed by a signal", { exit: { code: null, signal: "SIGKILL" } }, { status: "killed", exitCode: null, message: "the runner exited unexpectedly (signal SIGKILL)" }],
  [
    "a runner killed by a signal inside, with what it said",
    { exit: { code: 137, signal: null }, launchErr: "  bwrap: oops\n" },
    { status: "killed", exitCode: null, message: "the runner exited unexpectedly (exit status 137, killed by signal 9, bwrap: oops)" },
  ],
];

describe("exit classification", () => {
  it.each(exitRows)("a call that ends with %s gets its status and message", (_name, facts, verdict) => {
    expect(classifyExit({ ...died, ...facts })).toEqual(verdict);
  });

  const result = (frame: Partial<ResultFrame>): ResultFrame => ({ type: "result", id: "r1", ok: true, exitCode: 0, ...frame });
  const resultRows: Array<[string, ResultFrame, CallVerdict]> = [
    ["ok", result({}), { status: "ok", exitCode: 0 }],
    ["an uncaught error", result({ ok: false, exitCode: 1, error: { type: "ValueError", message: "x", traceback: "" } }), { status: "error", exitCode: 1 }],
    ["Python's MemoryError", result({ ok: false, exitCode: 1, error: { type: "MemoryError", message: "", traceback: "" } }), { status: "memory_limit", exitCode: 1 }],
    ["a non-zero Bash status", result({ ok: false, exitCode: 7, error: { type: "ExitStatus", message: "command exited with status 7", traceback: "" } }), { status: "error", exitCode: 7 }],
  ];
  it.each(resultRows)("a call the runner reports as %s gets that status", (_name, frame, verdict) => {
    expect(classifyResult(frame)).toEqual(verdict);
  });

  it("says an interrupted call's interpreter lives on, with the reason it was interrupted", () => {
    expect(classifyInterrupted("timeout", 2500)).toEqual({
      status: "timeout",
      exitCode: null,
      message: "execution timed out after 2.5 s and was interrupted; the interpreter and its state (variables, imports) are kept",
      interrupted: true,
    });
    expect(classifyInterrupted("killed", 2500)).toMatchObject({ status: "killed", interrupted: true, message: expect.stringMatching(/^the call was cancelled and the code interrupted; /) });
  });

  it("describes a sandbox that failed to start by its exit and its own complaint", () => {
    expect(describeExit({ code: 1, signal: null }, "bwrap: Can't mount proc\n")).toBe("exit status 1, bwrap: Can't mount proc");
    expect(describeExit({ code: null, signal: "SIGKILL" }, "")).toBe("signal SIGKILL");
  });
});
