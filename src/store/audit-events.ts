// The events governance records and the audit trail stores (the metrics count them, the anomaly
// rules watch them): one shape per kind. The engine records file events; governance records the rest.

import type { Language } from "../languages/index.js";
import type { Action, Category, RiskLevel, Severity } from "../config/index.js";

interface EventBase {
  /** Milliseconds since the epoch; set by `record` when left out. */
  time: number;
  /** The caller's identity: "key:<name>", "local" (no keys, or library use), "stdio", or "peer:<address>" for a refused request. Never a key. */
  client: string;
  sessionId?: string | null;
  /** Ties an execution to its tool calls, approvals and blocks. */
  executionId?: string;
}

/** A finding as audits keep it: where and what, without the prose. */
export interface FindingRef {
  ruleId: string;
  category: Category;
  severity: Severity;
  line: number;
}

export interface ExecutionEvent extends EventBase {
  kind: "execution";
  language: Language;
  code: string;
  /** sha256 of the code, hex. */
  codeHash: string;
  risk: number;
  level: RiskLevel;
  action: Action;
  findings: FindingRef[];
  /** The run's status (ok, error, timeout, memory_limit, output_limit, killed), or why it did not run. */
  status: string;
  durationMs: number;
  background: boolean;
  /** CPU time and peak memory of the sandbox during the call, where the host could measure them. */
  cpuMs?: number;
  memoryPeakBytes?: number;
  stdoutBytes: number;
  stderrBytes: number;
  tokensReturned: number;
  tokensInSandbox: number;
  /** PII values replaced by tokens in what reached the agent, per kind; never the values. */
  pii?: Record<string, number>;
  error?: string;
}

export interface ToolCallEvent extends EventBase {
  kind: "tool_call";
  /** The catalog id, "server.tool" (or what the code asked for, when it named no known tool). */
  tool: string;
  server?: string;
  action: "allow" | "approve" | "deny";
  outcome: "ok" | "error" | "denied" | "timeout" | "unavailable" | "not_found" | "limit";
  argsBytes: number;
  argsHash: string;
  resultBytes?: number;
  resultHash?: string;
  durationMs: number;
  /** PII values found in the result (and so tokenized on their way to the agent), per kind; never the values. */
  pii?: Record<string, number>;
  error?: string;
}

export interface FileEvent extends EventBase {
  kind: "file";
  operation: "read" | "write" | "list" | "delete" | "upload" | "download" | "fork";
  /** The workspace path as the caller named it. */
  path: string;
  bytes?: number;
  outcome: "ok" | "error";
  error?: string;
}

export interface ApprovalEvent extends EventBase {
  kind: "approval";
  approvalId: string;
  subject: "execution" | "tool_call";
  summary: string;
  /** Tool calls: sha256 of the canonical JSON of the arguments put to the person (what an approval holds for). */
  argsDigest?: string;
  decision: "requested" | "approved" | "denied" | "timeout" | "cancelled";
  /** Who decided ("mcp-client:<identity>", "key:<name>"); absent while requested. */
  by?: string;
  waitedMs?: number;
}

export interface AuthFailureEvent extends EventBase {
  kind: "auth_failure";
  reason: "missing_key" | "invalid_key" | "missing_scope";
  /** "METHOD /path" for REST, "tools/call <name>" for MCP. */
  route: string;
  scope?: string;
  /**
   * Refusals this row stands for (absent: one). Repeated refusals of one caller for one reason are
   * counted over a window and written as one row; `route` is then the latest one's.
   */
  count?: number;
  /** When the counted window began, ms since the epoch (with `count`). */
  since?: number;
}

export interface PolicyBlockEvent extends EventBase {
  kind: "policy_block";
  subject: "execution" | "tool_call";
  language?: Language;
  tool?: string;
  risk?: number;
  findings: FindingRef[];
  reason: string;
}

export interface AnomalyEvent extends EventBase {
  kind: "anomaly";
  /** The anomaly rule's id, e.g. "burst", "repeated-blocks". */
  rule: string;
  detail: string;
  /** Seconds the client is slowed down or refused for, when the rule throttles. */
  throttledForS?: number;
}

export type GovernanceEvent = ExecutionEvent | ToolCallEvent | FileEvent | ApprovalEvent | AuthFailureEvent | PolicyBlockEvent | AnomalyEvent;
export type GovernanceEventKind = GovernanceEvent["kind"];

type WithoutTime<E> = E extends GovernanceEvent ? Omit<E, "time"> & { time?: number } : never;
export type NewGovernanceEvent = WithoutTime<GovernanceEvent>;

/** A consumer of events. A promise it returns is awaited: the audit pushes back on a full queue. */
export interface EventSink {
  record(event: GovernanceEvent): void | Promise<void>;
  /**
   * Settles once the sink could take a row, rejecting when it cannot in time (the audit's full
   * queue): asked before code runs, so that a run is never done and then left unrecorded. A sink
   * that has it takes the `execution` event of an admitted run whatever its queue holds.
   */
  admit?(): void | Promise<void>;
}
