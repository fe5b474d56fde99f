// The vocabulary of governance: analyses of code and the approval broker, beside the words, the
// result's summary and the approval question it shares with the core (named here too, for its files).

import type { Language } from "../../languages/index.js";
import type { RiskLevel } from "../../config/security-terms.js";
import type { ApprovalDecision, ApprovalRequest, Approver, Finding } from "../../execution/index.js";

// From the words' own module, not the config's index: the analysis worker loads this file, and no config with it.
export { ACTIONS, CATEGORIES, RISK_LEVELS, SECURITY_LEVELS, SEVERITIES } from "../../config/security-terms.js";
export type { Action, Category, RiskLevel, SecurityLevel, Severity } from "../../config/security-terms.js";
export type { Finding, SecuritySummary } from "../../execution/index.js";
export type { ApprovalDecision, ApprovalRequest, Approver } from "../../execution/index.js";

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

/** Puts approval requests to a human: the calling client when it can answer, else the approvals queue. */
export interface ApprovalBroker {
  /** Waits for a decision; a timeout or an aborted signal is a denial (`by: "timeout"` / "cancelled"). */
  request(
    request: Omit<ApprovalRequest, "id" | "createdAt" | "expiresAt">,
    options: { approver?: Approver | undefined; signal?: AbortSignal | undefined; onWaiting?: ((message: string) => void) | undefined },
  ): Promise<ApprovalDecision>;
}
