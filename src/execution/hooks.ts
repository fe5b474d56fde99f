// What the engine calls around a run and a file operation, for whoever judges and records them
// (governance implements it; src/app wires it in). Without hooks code runs unjudged and unrecorded.

import type { Language } from "../languages/index.js";
import type { FileEvent } from "../store/audit-events.js";
import type { Approver } from "./approval.js";
import type { ExecutionResult } from "./result-builder.js";
import type { SecuritySummary } from "./security-summary.js";

/** Who runs what: the context of one judged run. */
export interface RunContext {
  language: Language;
  /** The code as the caller wrote it (TypeScript before transpiling, a shell line before it is wrapped). */
  code: string;
  owner: string;
  sessionId: string | null;
  executionId: string;
  background: boolean;
  approver?: Approver | undefined;
  signal?: AbortSignal | undefined;
  onWaiting?: ((message: string) => void) | undefined;
}

/** The judgement of one run, as the engine sees it; the hooks keep the rest of theirs in it. */
export interface RunVerdict {
  context: RunContext;
  /**
   * Whether admit() refuses the run or first waits for a person: a sandbox fetched for it meanwhile
   * is given back rather than held (see Engine.gatedSandbox).
   */
  readonly heldAtAdmit: boolean;
  /** Goes on the result as `security`. */
  readonly security: SecuritySummary;
}

/**
 * The run's lifecycle, in order: judge (on a stateless call, while its sandbox is fetched), admit,
 * roomToRecord, the run, recordRun (however it ended). `V` is the hooks' own verdict; the engine
 * hands back only the verdicts judge gave it.
 */
export interface RunHooks<V extends RunVerdict = RunVerdict> {
  /** Judges the code; nothing is refused yet. */
  judge(context: RunContext): Promise<V>;
  /** Throws the refusal of a verdict (recorded first); unless `blockOnly`, asks a person about one that needs it. */
  admit(verdict: V, blockOnly?: boolean): Promise<void>;
  /** Settles once the run's record will be taken (rejects when it cannot be in time): code never runs unrecorded. */
  roomToRecord(): Promise<void>;
  /** Records the run once it ended: its result, or the error it threw. */
  recordRun(verdict: V, durationMs: number, result: ExecutionResult | undefined, error?: unknown): Promise<void>;
}

/** A file operation as it is recorded; `time` is the sink's to set. */
export type NewFileEvent = Omit<FileEvent, "time">;

/** Where the engine records workspace file operations. A rejection fails the operation: nothing is handed back unrecorded. */
export interface FileEventSink {
  record(event: NewFileEvent): Promise<void>;
}

/** Engine.create's `hooks`: each part is optional, and a missing one is not called. */
export interface EngineHooks {
  /** Judge, admit and record every run. */
  runs?: RunHooks;
  /** Record every workspace file operation. */
  files?: FileEventSink;
}
