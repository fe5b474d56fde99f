// governance.analyze: the static analysis of a program without running it, and what the code
// policy would do with it (MCP analyze_code, REST POST /security/analyze).

import type { SandgateConfig } from "../../config/index.js";
import { SandgateError } from "../../errors/index.js";
import { unknownLanguageError } from "../../execution/index.js";
import { decide } from "./code-policy.js";
import type { Governance } from "./governance.js";
import { resolveLanguage } from "../../languages/index.js";
import { defineOperation } from "../../operations/index.js";
import { analyzeCodeInput, analyzeCodeOutput, toWireAnalysis, type WireAnalysis } from "./wire.js";

/** What an analysis needs: the code limits and policy (config) and the analyzer (governance). */
export interface AnalyzeHost {
  config: SandgateConfig;
  governance: Governance;
}

/** The analysis of `code` as `language` and, with governance on, the policy's action. */
export async function analyzeForWire(host: AnalyzeHost, code: string, language: string, owner?: string): Promise<WireAnalysis> {
  const resolved = resolveLanguage(language);
  if (!resolved) throw unknownLanguageError(language);
  // As execute_code: nothing to analyse is a mistake, not code the policy would allow.
  if (code.trim() === "") throw new SandgateError("CODE_EMPTY", "code is empty; send the program to analyse");
  const { maxCodeBytes } = host.config.limits;
  const bytes = Buffer.byteLength(code, "utf8");
  if (bytes > maxCodeBytes) {
    throw new SandgateError("CODE_TOO_LARGE", `code is ${bytes} bytes, above the maximum of ${maxCodeBytes} bytes`, { data: { bytes, maximum: maxCodeBytes } });
  }
  const analysis = await host.governance.analyzer.analyze(resolved, code, owner !== undefined ? { owner } : {});
  const action = host.config.security.enabled ? decide(analysis, host.config.security).action : undefined;
  return toWireAnalysis(analysis, action);
}

/** "risk 72 (high), would warn" and one line per finding: "3:1 high py.process-exec.os-system message". */
export function renderAnalysisText(result: WireAnalysis): string {
  const head = `${result.language}: risk ${result.risk} (${result.level})${result.action ? `, policy action: ${result.action}` : ""}; ${result.findings.length} finding${result.findings.length === 1 ? "" : "s"}.`;
  const lines = result.findings.map((f) => `${f.line}:${f.column} ${f.severity} ${f.rule_id} ${f.message}${f.recommendation ? ` (${f.recommendation})` : ""}`);
  return [head, ...lines].join("\n");
}

export const analyzeCode = defineOperation({
  id: "governance.analyze",
  summary: "Static analysis of code without running it: risk, level, the policy's action, findings and metrics",
  scope: "execute",
  effects: ["read"],
  idempotent: true,
  input: analyzeCodeInput,
  output: analyzeCodeOutput,
  run: (host: AnalyzeHost, input, call) => analyzeForWire(host, input.code, input.language, call.owner),
  surfaces: {
    mcp: {
      tool: "analyze_code",
      title: "Analyse code for security risks",
      description: "Analyse code without running it: findings (rule, severity, line, fix), risk 0-100, and what the code policy would do (allow, warn, approve, block).",
      text: renderAnalysisText,
    },
    // An analysis of up to a megabyte costs like a run: counted against the caller's concurrency cap, as analyze_code over MCP.
    rest: { method: "post", path: "/security/analyze", tag: "status", description: null, body: "tool", countsAsRun: true },
    sandbox: null,
  },
});
