// The governance feature: static analysis of code, the effective security policy, and the
// approvals queue; plus the security shapes every surface shows (wire.ts).
export { analyzeCode, analyzeForWire, renderAnalysisText, type AnalyzeHost } from "./analyze.js";
export { decideApproval, getApproval, listApprovals, type ApprovalsHost } from "./approvals.js";
export { POLICY_URI, securityPolicy, type PolicyHost } from "./policy.js";
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
import { decideApproval, getApproval, listApprovals } from "./approvals.js";

/** The operations of this feature, for the registry: analyze_code on MCP; the approvals queue on REST only. */
export const governanceOperations = [analyzeCode, listApprovals, getApproval, decideApproval] as const;
