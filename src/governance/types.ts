// The vocabulary of governance: findings of the static analysis, risk levels, policy actions and
// approvals. Every other governance file, the execution gate and the audit speak these types.

import type { Language } from "../languages/index.js";

export const SEVERITIES = ["info", "low", "medium", "high", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

/** What a finding is about. Rules pick one; policy overrides and audit filters are keyed by it. */
export const CATEGORIES = [
  "code-exec",
  "process-exec",
  "deserialization",
  "reverse-shell",
  "download-exec",
  "exfiltration",
  "obfuscation",
  "network",
  "filesystem",
  "resource-abuse",
  "prototype-pollution",
  "privilege",
  "persistence",
] as const;
export type Category = (typeof CATEGORIES)[number];

/** One thing the analysis saw, with where it is (1-based lines and columns) and what to do instead. */
export interface Finding {
  /** Stable id of the rule, e.g. "py.process.os-system"; `<language prefix>.<category>.<name>`. */
  ruleId: string;
  category: Category;
  severity: Severity;
  line: number;
  endLine: number;
  column: number;
  message: string;
  recommendation: string;
}

/** Size and shape of the code, from the same parse. */
export interface CodeMetrics {
  lines: number;
  bytes: number;
  /** Function, method and lambda definitions. */
  functions: number;
  calls: number;
  imports: number;
  /** Branch points + 1 over the whole program (McCabe). */
  cyclomatic: number;
  /** Deepest nesting of functions and branches inside each other (control-flow depth). */
  maxDepth: number;
  /** Nodes the parser could not make sense of; analysis of broken code is best effort. */
  parseErrors: number;
}

export const RISK_LEVELS = ["none", "low", "medium", "high", "critical"] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** The result of analysing one program. */
export interface Analysis {
  language: Language;
  /** 0-100, from the findings (risk.ts holds the formula). */
  risk: number;
  level: RiskLevel;
  /** Most severe first, then by line. */
  findings: Finding[];
  metrics: CodeMetrics;
  durationMs: number;
}

/** What policy decides for a run or a tool call. */
export const ACTIONS = ["allow", "warn", "approve", "block"] as const;
export type Action = (typeof ACTIONS)[number];

/** Named policy tables from severities to actions (policy.ts), picked by `security.level`. */
export const SECURITY_LEVELS = ["permissive", "standard", "strict"] as const;
export type SecurityLevel = (typeof SECURITY_LEVELS)[number];

/** What every execute result carries (`security` on the wire): the top findings, all of them in the audit. */
export interface SecuritySummary {
  risk: number;
  level: RiskLevel;
  action: Action;
  findings: Finding[];
  /** How many findings there were in all, when `findings` shows fewer. */
  totalFindings?: number;
  /** Who approved the run, when it needed approval. */
  approvedBy?: string;
}

/** A question put to a human: may this run or tool call go ahead? */
export interface ApprovalRequest {
  id: string;
  kind: "execution" | "tool_call";
  /** Identity of the caller whose code asks (an API key's name, an MCP session, a peer). */
  client: string;
  sessionId: string | null;
  executionId: string;
  /** One line a person can decide on, e.g. "run python code with risk 72 (process-exec at line 3)". */
  summary: string;
  /** Tool calls: "server.tool" and the arguments' size; executions: language, risk and findings. */
  details: Record<string, unknown>;
  /**
   * Tool calls: the arguments as they will be sent (the same object, never read again from the
   * sandbox), for GET /approvals/{id}; the list and the client's form show the bounded view in details.
   */
  args?: Record<string, unknown>;
  /** Tool calls: sha256 of the arguments' canonical JSON; a decision naming another digest is refused. */
  argsDigest?: string;
  createdAt: number;
  expiresAt: number;
}

export interface ApprovalDecision {
  approved: boolean;
  /** Who decided: "mcp-client:<identity>", "key:<name>", or "timeout". */
  by: string;
  reason?: string;
}

/**
 * Asks the calling client itself (MCP elicitation). Resolves undefined when it cannot ask (the
 * client has no elicitation, or declined to answer), so the broker falls back to the REST queue.
 */
export type Approver = (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalDecision | undefined>;

/** Puts approval requests to a human: the calling client when it can answer, else the approvals queue. */
export interface ApprovalBroker {
  /** Waits for a decision; a timeout or an aborted signal is a denial (`by: "timeout"` / "cancelled"). */
  request(
    request: Omit<ApprovalRequest, "id" | "createdAt" | "expiresAt">,
    options: { approver?: Approver | undefined; signal?: AbortSignal | undefined; onWaiting?: ((message: string) => void) | undefined },
  ): Promise<ApprovalDecision>;
}
