// What the engine needs from code mode for one execution (src/codemode implements it): a
// handler for the code's upstream calls, and the record of those calls at the end.

import type { UpstreamCallHandler } from "../sandbox/index.js";

/** One upstream call as the execution result reports it (`tool_calls` on the wire). */
export interface UpstreamCallRecord {
  tool: string;
  ok: boolean;
  durationMs: number;
  error?: string;
}

export interface UpstreamCallSummary {
  calls: UpstreamCallRecord[];
  /** Tokens of upstream results that were handed to the code and never reached the agent. */
  tokensInSandbox: number;
}

/** What the engine needs from code mode for one execution. */
export interface UpstreamCallScope {
  onUpstreamCall: UpstreamCallHandler;
  finish: () => UpstreamCallSummary;
}
