// `sandgate analyze`: the static analysis of a program without running it, and the action the
// code policy would take; exits 3 when the policy would block it or ask for approval.

import { readFileSync } from "node:fs";
import type { SandgateConfig } from "../config/index.js";
import { SandgateError } from "../errors/index.js";
import { Analyzer, decide } from "../governance/index.js";
import { describeLanguages, languageForFile, resolveLanguage } from "../languages/index.js";
import { toWireAnalysis } from "../server/index.js";

export interface AnalyzeArgs {
  language?: string;
  file?: string;
  code?: string;
  json?: boolean;
}

/** Exit status when the policy would not simply let the code run (block or approve). */
export const EXIT_HELD = 3;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function readCodeFile(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new SandgateError("INVALID_INPUT", `-f ${file}: ${code === "ENOENT" ? "no such file" : (code ?? String(error))}`);
  }
}

export async function runAnalyze(args: AnalyzeArgs, config: SandgateConfig): Promise<number> {
  let code: string;
  if (args.file !== undefined) code = readCodeFile(args.file);
  else if (args.code !== undefined) code = args.code;
  else if (!process.stdin.isTTY) code = await readStdin();
  else throw new SandgateError("CODE_EMPTY", "no code given: pass it as an argument, with -f FILE, or on standard input");
  const named = args.language ?? (args.file !== undefined ? languageForFile(args.file) : undefined);
  if (named === undefined) throw new SandgateError("INVALID_INPUT", `say which language with --language: ${describeLanguages()}`);
  const language = resolveLanguage(named);
  if (!language) throw new SandgateError("UNKNOWN_LANGUAGE", `unknown language ${JSON.stringify(named)}; use one of ${describeLanguages()}`);
  const analysis = await new Analyzer().analyze(language, code);
  // With governance off there is no policy: the analysis alone, and exit 0.
  const action = config.security.enabled ? decide(analysis, config.security).action : undefined;
  const wire = toWireAnalysis(analysis, action);
  if (args.json) {
    process.stdout.write(`${JSON.stringify(wire, null, 2)}\n`);
  } else {
    const lines = [
      `level: ${wire.level}`,
      `risk: ${wire.risk}`,
      `action: ${wire.action ?? "none (governance is off)"}${action ? ` (security level ${config.security.languages[language]?.level ?? config.security.level})` : ""}`,
      ...wire.findings.map((f) => `${f.line}:${f.column} ${f.severity} ${f.rule_id} ${f.message}`),
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  }
  return action === "block" || action === "approve" ? EXIT_HELD : 0;
}
