// How a call ended, decided from facts gathered about it: the runner's result, or why and how the
// sandbox died (host kill, cgroup OOM, runtime heap limit, CPU limit, crash). Pure; table-tested.

import type { RunnerSpec } from "../languages/index.js";
import type { ResultFrame } from "./protocol.js";

export type RunStatus = "ok" | "error" | "timeout" | "memory_limit" | "output_limit" | "killed";

/** Why the host killed a sandbox. `stopped`: it broke a bound, and the stop message says which. */
export type KillReason = "timeout" | "output_limit" | "killed" | "stopped";

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What is known when a sandbox's process tree has gone during a call. */
export interface ExitFacts {
  exit: ExitStatus;
  /** Set when the host killed the sandbox, with why. */
  killReason: KillReason | undefined;
  /** For `stopped`: which bound the sandbox broke. */
  stopMessage: string;
  /**
   * The sandbox's cgroup counted an OOM kill during this call. A session machine's runners share
   * one cgroup, so the kill may have been another runner's: it is this call's only if the runner
   * died the way the OOM killer ends a process (SIGKILL).
   */
  oomKilled: boolean;
  /** The last bytes of the call's stderr, where a runtime writes its fatal out-of-memory message. */
  stderrTail: string;
  runner: Pick<RunnerSpec, "abortMeansOutOfMemory">;
  timeoutMs: number;
  /** Set when the code was interrupted first and the runner did not end the call within this grace. */
  interruptGraceMs?: number | undefined;
  /** Why the code was interrupted, when it was: a runner the interrupt itself ended still ends the call for that. */
  interruptedFor?: "timeout" | "killed" | undefined;
  outputCapBytes: number;
  memoryMb: number;
  /** What bubblewrap or the runner said before it died (its own complaint, not user output). */
  launchErr: string;
}

export interface CallVerdict {
  status: RunStatus;
  exitCode: number | null;
  /** Why the call ended, when the runner did not say (timeout, flood, OOM, crash). */
  message?: string;
  /** The code was interrupted and the runner ended the call: the interpreter and its state are kept. */
  interrupted?: boolean;
}

const SIGABRT = 6;
const SIGKILL = 9;
const SIGXCPU = 24;
/** How much of stderr a runtime's fatal message is looked for in. */
export const STDERR_TAIL_BYTES = 16_384;
/** V8's fatal messages when it reaches the heap limit it was given (below the cgroup's). */
const HEAP_EXHAUSTED = /JavaScript heap out of memory|Reached heap limit/;

/** A call the runner finished and reported: its result says how it went. */
export function classifyResult(result: ResultFrame): CallVerdict {
  const memoryError = result.error?.type === "MemoryError";
  return { status: result.ok ? "ok" : memoryError ? "memory_limit" : "error", exitCode: result.exitCode };
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}

/** A call interrupted on a timeout or cancel that the runner then ended itself: the interpreter lives on. */
export function classifyInterrupted(reason: "timeout" | "killed", timeoutMs: number): CallVerdict {
  const kept = "the interpreter and its state (variables, imports) are kept";
  return reason === "timeout"
    ? { status: "timeout", exitCode: null, message: `execution timed out after ${seconds(timeoutMs)} s and was interrupted; ${kept}`, interrupted: true }
    : { status: "killed", exitCode: null, message: `the call was cancelled and the code interrupted; ${kept}`, interrupted: true };
}

/** A call during which the sandbox died: the host's reason first, then what the exit shows. */
export function classifyExit(facts: ExitFacts): CallVerdict {
  const limitS = seconds(facts.timeoutMs);
  // The code was interrupted first and went on running (it caught the interrupt, or could not take it).
  const ignored = facts.interruptGraceMs === undefined ? "" : `; it did not stop within ${seconds(facts.interruptGraceMs)} s of an interrupt, so the interpreter was killed and its state is lost`;
  switch (facts.killReason) {
    case "timeout":
      return { status: "timeout", exitCode: null, message: `execution timed out after ${limitS} s and was stopped${ignored}` };
    case "output_limit":
      return { status: "output_limit", exitCode: null, message: `output exceeded ${facts.outputCapBytes} bytes and the run was stopped` };
    case "killed":
      return { status: "killed", exitCode: null, message: `the sandbox was stopped${ignored}` };
    case "stopped":
      return { status: "killed", exitCode: null, message: facts.stopMessage };
    case undefined:
      break;
  }
  const { code } = facts.exit;
  if ((facts.oomKilled && killedBySigkill(facts.exit)) || runtimeHeapExhausted(facts)) {
    return { status: "memory_limit", exitCode: null, message: `memory limit of ${facts.memoryMb} MB reached; the process was killed` };
  }
  // The code took the interrupt's default action (it reset SIGINT's handler): the timeout or cancel ended it.
  if (facts.interruptedFor === "timeout") {
    return { status: "timeout", exitCode: null, message: `execution timed out after ${limitS} s; the interrupt ended the interpreter (${describeExit(facts.exit, "")}), so its state is lost` };
  }
  if (facts.interruptedFor === "killed") {
    return { status: "killed", exitCode: null, message: `the call was cancelled; the interrupt ended the interpreter (${describeExit(facts.exit, "")}), so its state is lost` };
  }
  if (code === 128 + SIGXCPU) {
    return { status: "timeout", exitCode: null, message: "CPU time limit reached; the process was stopped" };
  }
  const exitCode = code !== null && code < 128 ? code : null;
  return {
    status: exitCode === null ? "killed" : "error",
    exitCode,
    message: `the runner exited unexpectedly (${describeExit(facts.exit, facts.launchErr)})`,
  };
}

/** The runner (bubblewrap's init reports it as 128 + the signal) or bubblewrap itself got SIGKILL. */
function killedBySigkill(exit: ExitStatus): boolean {
  return exit.code === 128 + SIGKILL || exit.signal === "SIGKILL";
}

/**
 * Node stops at its own heap limit (set below the cgroup's) with an abort and a fatal message
 * of V8's, before the kernel's OOM killer would act: that is the memory limit too.
 */
function runtimeHeapExhausted(facts: ExitFacts): boolean {
  return facts.runner.abortMeansOutOfMemory && facts.exit.code === 128 + SIGABRT && HEAP_EXHAUSTED.test(facts.stderrTail);
}

/** How a sandbox's process ended, for messages: `exit status 1`, `signal SIGKILL, ...`. */
export function describeExit(exit: ExitStatus, launchErr: string): string {
  const { code, signal } = exit;
  const parts = [signal ? `signal ${signal}` : `exit status ${String(code)}`];
  if (code !== null && code > 128) parts.push(`killed by signal ${code - 128}`);
  if (launchErr.trim()) parts.push(launchErr.trim());
  return parts.join(", ");
}
