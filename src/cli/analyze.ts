// `sandgate analyze`: the static analysis of a program without running it, and the action the
// code policy would take; exits 3 when the policy would block it or ask for approval.

import type { SandgateConfig } from "../config/index.js";
import { SandgateError } from "../errors/index.js";
import { Analyzer, decide } from "../features/governance/index.js";
import { describeLanguages, languageForFile, resolveLanguage } from "../languages/index.js";
import { toWireAnalysis } from "../server/index.js";
import { readCode } from "./code-input.js";
import type { CliIo } from "./io.js";
import { printable } from "./printable.js";

export interface AnalyzeArgs {
  language?: string;
  file?: string;
  code?: string;
  json?: boolean;
}

/** Exit status when the policy would not simply let the code run (block or approve). */
export const EXIT_HELD = 3;

export async function runAnalyze(args: AnalyzeArgs, config: SandgateConfig, io: CliIo): Promise<number> {
  const code = await readCode(args, io);
  // As `sandgate exec` and the server: nothing to analyse is a mistake, not code that is safe to run.
  if (code.trim() === "") throw new SandgateError("CODE_EMPTY", `${args.file !== undefined ? `${args.file} holds no code` : "code is empty"}; give the program to analyse`);
  const named = args.language ?? (args.file !== undefined ? languageForFile(args.file) : undefined);
  if (named === undefined) throw new SandgateError("INVALID_INPUT", `say which language with --language: ${describeLanguages()}${args.file !== undefined ? ` (the extension of ${args.file} names none)` : ""}`);
  const language = resolveLanguage(named);
  if (!language) throw new SandgateError("UNKNOWN_LANGUAGE", `unknown language ${JSON.stringify(named)}; use one of ${describeLanguages()}`);
  // In a worker with the server's deadline: a program that hangs the analysis gets an analysis.failed finding.
  const analyzer = new Analyzer({ timeoutMs: config.security.analysisTimeoutMs });
  const analysis = await analyzer.analyze(language, code).finally(() => analyzer.close());
  // With governance off there is no policy: the analysis alone, and exit 0.
  const action = config.security.enabled ? decide(analysis, config.security).action : undefined;
  const wire = toWireAnalysis(analysis, action);
  if (args.json) {
    io.stdout.write(`${JSON.stringify(wire, null, 2)}\n`);
  } else {
    const lines = [
      `level: ${wire.level}`,
      `risk: ${wire.risk}`,
      `action: ${wire.action ?? "none (governance is off)"}${action ? ` (security level ${config.security.languages[language]?.level ?? config.security.level})` : ""}`,
      // Messages quote the analysed code, which may carry terminal escapes meant for whoever reads this.
      ...wire.findings.map((f) => `${f.line}:${f.column} ${f.severity} ${f.rule_id} ${printable(f.message)}`),
    ];
    io.stdout.write(`${lines.join("\n")}\n`);
  }
  return action === "block" || action === "approve" ? EXIT_HELD : 0;
}
