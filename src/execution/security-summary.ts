// What an execute result says of its code's security (`security` on the wire): the findings the
// analysis saw and the policy's action. Governance fills it in (see hooks.ts); the engine carries it.

import type { Action, Category, RiskLevel, Severity } from "../config/index.js";

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
