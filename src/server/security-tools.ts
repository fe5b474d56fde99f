// analyze_code: the static analysis of a program without running it, and what the code policy
// would do with it; the MCP tool, POST /security/analyze and the OpenAPI document share it.

import { resolveLanguage } from "../languages/index.js";
import { decide } from "../governance/index.js";
import { unknownLanguageError } from "../execution/index.js";
import { SandgateError } from "../errors/index.js";
import type { ServerContext } from "./context.js";
import { analyzeCodeInput, analyzeCodeOutput, toWireAnalysis, type WireAnalysis } from "./security-wire.js";
import { defineTool, type ToolDefinition } from "./tool-definition.js";

/** The analysis of `code` as `language` and, with governance on, the policy's action. */
export async function analyzeForWire(ctx: ServerContext, code: string, language: string, owner?: string): Promise<WireAnalysis> {
  const resolved = resolveLanguage(language);
  if (!resolved) throw unknownLanguageError(language);
  // As execute_code: nothing to analyse is a mistake, not code the policy would allow.
  if (code.trim() === "") throw new SandgateError("CODE_EMPTY", "code is empty; send the program to analyse");
  const bytes = Buffer.byteLength(code, "utf8");
  if (bytes > ctx.config.limits.maxCodeBytes) {
    throw new SandgateError("CODE_TOO_LARGE", `code is ${bytes} bytes, above the maximum of ${ctx.config.limits.maxCodeBytes} bytes`, {
      data: { bytes, maximum: ctx.config.limits.maxCodeBytes },
    });
  }
  const analysis = await ctx.governance.analyzer.analyze(resolved, code, owner !== undefined ? { owner } : {});
  const action = ctx.config.security.enabled ? decide(analysis, ctx.config.security).action : undefined;
  return toWireAnalysis(analysis, action);
}

/** "risk 72 (high), would warn" and one line per finding: "3:1 high py.process-exec.os-system message". */
export function renderAnalysisText(result: WireAnalysis): string {
  const head = `${result.language}: risk ${result.risk} (${result.level})${result.action ? `, policy action: ${result.action}` : ""}; ${result.findings.length} finding${result.findings.length === 1 ? "" : "s"}.`;
  const lines = result.findings.map((f) => `${f.line}:${f.column} ${f.severity} ${f.rule_id} ${f.message}${f.recommendation ? ` (${f.recommendation})` : ""}`);
  return [head, ...lines].join("\n");
}

export function createSecurityTools(ctx: ServerContext): ToolDefinition[] {
  const analyzeCode = defineTool({
    name: "analyze_code",
    scope: "execute",
    title: "Analyse code for security risks",
    description: "Analyse code without running it: findings (rule, severity, line, fix), risk 0-100, and what the code policy would do (allow, warn, approve, block).",
    input: analyzeCodeInput,
    output: analyzeCodeOutput,
    annotations: { title: "Analyse code for security risks", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async run(args, call) {
      const result = await analyzeForWire(ctx, args.code, args.language, call.owner);
      return { structured: result, text: renderAnalysisText(result) };
    },
  });
  return [analyzeCode];
}
