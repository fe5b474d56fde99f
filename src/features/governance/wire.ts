// The security shapes on the wire: findings, the `security` summary of execute results and the
// answer of analyze_code / POST /security/analyze, in snake_case like the rest of the wire.

import { z } from "zod";
import { ACTIONS, CATEGORIES, RISK_LEVELS, SEVERITIES, type Analysis, type Finding, type SecuritySummary } from "./types.js";
import { LANGUAGE_NAMES_AND_ALIASES } from "../../languages/index.js";

export const findingSchema = z.object({
  rule_id: z.string().describe("Stable rule id, <language>.<category>.<name>"),
  category: z.enum(CATEGORIES),
  severity: z.enum(SEVERITIES),
  line: z.number().int().describe("1-based"),
  end_line: z.number().int(),
  column: z.number().int().describe("1-based"),
  message: z.string(),
  recommendation: z.string(),
});
export type WireFinding = z.infer<typeof findingSchema>;

export const securitySummarySchema = z
  .object({
    risk: z.number().int().describe("Risk score 0-100 from the findings"),
    level: z.enum(RISK_LEVELS),
    action: z.enum(ACTIONS).describe("What the code policy did: allow, warn, approve (a human approved it) or block"),
    findings: z.array(findingSchema).describe("The most severe findings (security.findingsShown at most); the audit keeps all"),
    total_findings: z.number().int().optional().describe("How many findings there were, when more than shown"),
    approved_by: z.string().optional().describe("Who approved the run, when it needed approval"),
  })
  .describe("Static analysis of the code and the policy's action (when governance is on)");
export type WireSecuritySummary = z.infer<typeof securitySummarySchema>;

export const analyzeCodeInput = z
  .object({
    code: z.string(),
    language: z.preprocess((value) => (typeof value === "string" ? value.toLowerCase() : value), z.enum(LANGUAGE_NAMES_AND_ALIASES)),
  })
  .strict();

export const analyzeCodeOutput = z.object({
  language: z.string(),
  risk: z.number().int(),
  level: z.enum(RISK_LEVELS),
  action: z.enum(ACTIONS).optional().describe("What the code policy would do if this code were run; absent when governance is off"),
  findings: z.array(findingSchema),
  metrics: z.object({
    lines: z.number().int(),
    bytes: z.number().int(),
    functions: z.number().int(),
    calls: z.number().int(),
    imports: z.number().int(),
    cyclomatic: z.number().int(),
    max_depth: z.number().int(),
    parse_errors: z.number().int(),
  }),
  duration_ms: z.number(),
});
export type WireAnalysis = z.infer<typeof analyzeCodeOutput>;

export function toWireFinding(f: Finding): WireFinding {
  return { rule_id: f.ruleId, category: f.category, severity: f.severity, line: f.line, end_line: f.endLine, column: f.column, message: f.message, recommendation: f.recommendation };
}

/**
 * The governance fields of an error's data (POLICY_BLOCKED, APPROVAL_DENIED, APPROVAL_NOT_FOUND) as
 * the wire spells them everywhere else: findings as in `security`, execution_id, approval_id.
 */
export function toWireGovernanceData(data: Record<string, unknown>): Record<string, unknown> {
  const { findings, executionId, approvalId, ...rest } = data;
  const isFinding = (f: unknown): f is Finding => typeof f === "object" && f !== null && "ruleId" in f;
  return {
    ...rest,
    ...(findings !== undefined ? { findings: Array.isArray(findings) ? findings.map((f: unknown) => (isFinding(f) ? toWireFinding(f) : f)) : findings } : {}),
    ...(executionId !== undefined ? { execution_id: executionId } : {}),
    ...(approvalId !== undefined ? { approval_id: approvalId } : {}),
  };
}

export function toWireSecurity(security: SecuritySummary): WireSecuritySummary {
  return {
    risk: security.risk,
    level: security.level,
    action: security.action,
    findings: security.findings.map(toWireFinding),
    ...(security.totalFindings !== undefined ? { total_findings: security.totalFindings } : {}),
    ...(security.approvedBy !== undefined ? { approved_by: security.approvedBy } : {}),
  };
}

export function toWireAnalysis(analysis: Analysis, action: WireAnalysis["action"]): WireAnalysis {
  const m = analysis.metrics;
  return {
    language: analysis.language,
    risk: analysis.risk,
    level: analysis.level,
    ...(action ? { action } : {}),
    findings: analysis.findings.map(toWireFinding),
    metrics: {
      lines: m.lines,
      bytes: m.bytes,
      functions: m.functions,
      calls: m.calls,
      imports: m.imports,
      cyclomatic: m.cyclomatic,
      max_depth: m.maxDepth,
      parse_errors: m.parseErrors,
    },
    duration_ms: Math.round(analysis.durationMs * 1000) / 1000,
  };
}

/** The one line an agent reads about the analysis, e.g. "security: risk 72 (high), warn: process-exec at line 3"; none at risk 0. */
export function securityLine(security: WireSecuritySummary | undefined): string | undefined {
  if (!security || security.risk === 0) return undefined;
  const top = security.findings.slice(0, 3).map((f) => `${f.category} at line ${f.line}`);
  const more = (security.total_findings ?? security.findings.length) - top.length;
  const approved = security.approved_by ? ` (approved by ${security.approved_by})` : "";
  return `[security: risk ${security.risk} (${security.level}), ${security.action}${approved}: ${top.join(", ")}${more > 0 ? `, and ${more} more` : ""}]`;
}
