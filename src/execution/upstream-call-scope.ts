// What the engine needs from code mode for one execution (src/code-mode implements it): a
// handler for the code's calls to upstream tools, and the record of those calls at the end.

import type { ToolCallHandler } from "../sandbox/index.js";

/** One tool call as the execution result reports it. */
export interface ToolCallRecord {
  tool: string;
  ok: boolean;
  durationMs: number;
  error?: string;
}

export interface ToolCallSummary {
  calls: ToolCallRecord[];
  /** Tokens of tool results that were handed to the code and never reached the agent. */
  tokensInSandbox: number;
}

/** What the engine needs from code mode for one execution. */
export interface ToolCallScope {
  onToolCall: ToolCallHandler;
  finish: () => ToolCallSummary;
}
