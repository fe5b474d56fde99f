// The governance feature: static analysis of code, risk scores, the code and tool policies,
// approvals, the events the audit, metrics and anomaly rules consume, and the engine's run hooks
// (the domain); its operations (analyze_code, the approvals queue), the effective security policy,
// and the security shapes every surface shows (wire.ts).

// The domain.
export { Analyzer } from "./analysis/analyzer.js";
export { ApprovalQueue, refusingBroker } from "./approval-queue.js";
export { argsDigest, argumentsView, canonicalJson } from "./approval-args.js";
export type { ArgumentsView } from "./approval-args.js";
export { deniedBecause } from "./denial.js";
export type { ApprovalQueueOptions, PendingApproval } from "./approval-queue.js";
export { Governance } from "./governance.js";
export { describeToolPolicy, toolPolicyFor } from "./tool-policy.js";
export type { ToolPolicyDecision } from "./tool-policy.js";
export type { GovernanceOptions } from "./governance.js";
export { GovernanceEvents, findingRefs } from "./events.js";
export type {
  AnomalyEvent,
  ApprovalEvent,
  AuthFailureEvent,
  EventSink,
  ExecutionEvent,
  FileEvent,
  FindingRef,
  GovernanceEvent,
  GovernanceEventKind,
  NewGovernanceEvent,
  PolicyBlockEvent,
  ToolCallEvent,
} from "./events.js";
export { riskLevel, riskScore } from "./risk.js";
export { decide, describeCodePolicy, LEVEL_TABLES } from "./code-policy.js";
export type { CategoryOverride, CategoryOverrides, CodePolicy, Decision, SeverityActions } from "./code-policy.js";
export { ACTIONS, CATEGORIES, RISK_LEVELS, SECURITY_LEVELS, SEVERITIES } from "./types.js";
export type {
  Action,
  Analysis,
  ApprovalBroker,
  ApprovalDecision,
  ApprovalRequest,
  Approver,
  Category,
  CodeMetrics,
  Finding,
  RiskLevel,
  SecurityLevel,
  SecuritySummary,
  Severity,
} from "./types.js";
export { AnomalyDetector } from "./anomalies.js";
export type { AnomalyDetectorOptions } from "./anomalies.js";
export type { AnomalyRule } from "./anomaly-rules.js";

// The operations and what the surfaces show.
export { analyzeCode, analyzeForWire, renderAnalysisText, type AnalyzeHost } from "./analyze.js";
export { decideApproval, getApproval, listApprovals, type ApprovalsHost } from "./approval-operations.js";
export { POLICY_URI, readSecurityPolicy, securityPolicy, type PolicyHost } from "./security-policy.js";
export {
  analyzeCodeInput,
  analyzeCodeOutput,
  findingSchema,
  securityLine,
  securitySummarySchema,
  toWireAnalysis,
  toWireFinding,
  toWireGovernanceData,
  toWireSecurity,
  type WireAnalysis,
  type WireFinding,
  type WireSecuritySummary,
} from "./wire.js";

import { analyzeCode } from "./analyze.js";
import { decideApproval, getApproval, listApprovals } from "./approval-operations.js";
import { readSecurityPolicy } from "./security-policy.js";

/** The operations of this feature, for the registry: analyze_code on MCP; the policy and the approvals queue on REST only. */
export const governanceOperations = [analyzeCode, readSecurityPolicy, listApprovals, getApproval, decideApproval] as const;
