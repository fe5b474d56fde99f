// What the engine needs from code mode for one execution (src/features/codemode implements it): a
// handler for the code's upstream calls, and the record of those calls at the end.

import type { Approver } from "./approval.js";
import type { OperationHandler, UpstreamCallHandler } from "../sandbox/index.js";

/** Who runs the execution whose upstream calls a scope handles: for tool policy, approvals and the audit. */
export interface ExecutionContext {
  /** Unique per execution; the audit ties the execution's tool calls and approvals to it. */
  executionId: string;
  /** The caller's identity (see ExecuteRequest.owner). */
  owner: string;
  sessionId: string | null;
  /**
   * Whose the session is, when another caller holds its server-minted id: the session's PII vault
   * is one, whoever runs code in it. The caller's own otherwise.
   */
  sessionOwner?: string;
  /** Asks the calling client itself when a tool call needs approval (MCP elicitation). */
  approver?: Approver;
  /** Receives "waiting for approval ..." while a tool call waits for a person (MCP progress). */
  onWaiting?: (message: string) => void;
}

/** One upstream call as the execution result reports it (`tool_calls` on the wire). */
export interface UpstreamCallRecord {
  tool: string;
  ok: boolean;
  durationMs: number;
  error?: string;
  /** Something the agent should know about a call that went through (tokens sent as typed). */
  note?: string;
}

export interface UpstreamCallSummary {
  calls: UpstreamCallRecord[];
  /** Tokens of upstream results that were handed to the code and never reached the agent. */
  tokensInSandbox: number;
}

/**
 * What leaves for the agent, made safe by code mode (PII tokens for the personal data that tool
 * results brought in). The engine applies it to results, streamed output and file reads.
 */
export interface OutputGuard {
  /** Whether text needs a pass now; false: it passes untouched, at no cost. */
  readonly active: boolean;
  /** `text` as the agent may see it; `count` adds its replacements to counts() (the result's pass, not the stream's). */
  text(text: string, count: boolean): string;
  /** The last position at or before `at` that no value in `text` spans (where streamed text may be cut); `at` when absent. */
  cutBefore?(text: string, at: number): number;
  /** Every string in `value` (keys too) as text() makes it, counted. */
  value(value: unknown): unknown;
  /** Replacements per kind in what was counted, for the audit (never values). */
  counts(): Record<string, number>;
  /** Resolves when this caller may scan its next slice of a big text (callers take turns); a pass of the event loop when absent. */
  turn?(): Promise<void>;
}

/** What the engine needs from code mode for one execution. */
export interface UpstreamCallScope {
  onUpstreamCall: UpstreamCallHandler;
  finish: () => UpstreamCallSummary;
  /** Applied to everything of this execution that leaves for the agent (PII tokens). */
  guard?: OutputGuard;
}

/**
 * Sandgate's own operations as sandboxed code calls them (search_tools, list_servers): the
 * composition root derives them from the operations registry. Not upstream calls, not in `calls`.
 */
export interface SandboxOperations {
  /** Answers one execution's calls, each run for the execution's caller. */
  handlerFor(context: ExecutionContext): OperationHandler;
}
