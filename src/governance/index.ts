// Public surface of governance: static analysis, risk scores, policy and approvals, and the
// events the audit, metrics and anomaly rules consume.
export { Analyzer } from "./analysis/analyzer.js";
export { ApprovalQueue, refusingBroker } from "./approvals.js";
export { argsDigest, argumentsView, canonicalJson } from "./approval-args.js";
export type { ArgumentsView } from "./approval-args.js";
export { deniedBecause } from "./denial.js";
export type { ApprovalQueueOptions, PendingApproval } from "./approvals.js";
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
export { decide, describeCodePolicy, LEVEL_TABLES } from "./policy.js";
export type { CategoryOverride, CategoryOverrides, CodePolicy, Decision, SeverityActions } from "./policy.js";
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
