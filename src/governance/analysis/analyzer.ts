// The static analysis: parses code with the language's grammar, runs its rules, counts metrics in
// one cursor walk, and scores the findings. An analysis is a risk signal, never the security boundary.

import type { Node } from "web-tree-sitter";
import type { Language } from "../../languages/index.js";
import { riskLevel, riskScore } from "../risk.js";
import { SEVERITIES, type Analysis, type CodeMetrics, type Finding } from "../types.js";
import { bashRules } from "./bash.js";
import { Grammars } from "./grammars.js";
import { javascriptRules, typescriptRules } from "./javascript.js";
import { pythonRules } from "./python.js";
import type { LanguageRules, MetricNodeTypes } from "./rules.js";

export const LANGUAGE_RULES: Record<Language, LanguageRules> = {
  python: pythonRules,
  javascript: javascriptRules,
  typescript: typescriptRules,
  bash: bashRules,
};

/** Most severe first, then in source order. */
function bySeverityThenLine(a: Finding, b: Finding): number {
  return SEVERITIES.indexOf(b.severity) - SEVERITIES.indexOf(a.severity) || a.line - b.line || a.column - b.column;
}

/**
 * Metrics from the parser's own search (descendantsOfType runs inside the wasm module): a walk over
 * every node from JavaScript costs about as much as the parse itself, this a small part of it.
 */
function countMetrics(root: Node, source: string, types: MetricNodeTypes): CodeMetrics {
  const kinds = new Map<string, keyof MetricNodeTypes>();
  for (const key of ["function", "call", "import", "branch"] as const) for (const type of types[key]) kinds.set(type, key);
  const counts = { function: 0, call: 0, import: 0, branch: 0 };
  const nesting: Node[] = [];
  for (const node of kinds.size > 0 ? root.descendantsOfType([...kinds.keys()]) : []) {
    const kind = kinds.get(node.type);
    if (!kind) continue;
    counts[kind]++;
    if (kind === "function" || kind === "branch") nesting.push(node);
  }
  const errors = root.hasError ? Math.max(1, root.descendantsOfType("ERROR").length) : 0;
  return {
    lines: source === "" ? 0 : source.split("\n").length,
    bytes: Buffer.byteLength(source, "utf8"),
    functions: counts.function,
    calls: counts.call,
    imports: counts.import,
    cyclomatic: counts.branch + 1,
    maxDepth: maxNesting(nesting),
    parseErrors: errors,
  };
}

/** How deeply the given nodes nest inside each other (they come in document order). */
function maxNesting(nodes: readonly Node[]): number {
  const open: number[] = [];
  let deepest = 0;
  for (const node of nodes) {
    while (open.length > 0 && (open.at(-1) ?? 0) <= node.startIndex) open.pop();
    open.push(node.endIndex);
    deepest = Math.max(deepest, open.length);
  }
  return deepest;
}

export class Analyzer {
  private grammars: Grammars | undefined;
  private loading: Promise<Grammars> | undefined;

  /** Loads the grammars (a few tens of ms, once per process); analyze() does it on first use. */
  async ready(): Promise<void> {
    this.grammars ??= await (this.loading ??= Grammars.load());
  }

  /** Analyses `code` as `language` (a resolved name, not an alias). */
  async analyze(language: Language, code: string): Promise<Analysis> {
    if (!this.grammars) await this.ready();
    return this.analyzeLoaded(language, code);
  }

  /** analyze() without waiting: for callers that awaited ready() (benches, hot paths). */
  analyzeLoaded(language: Language, code: string): Analysis {
    const grammars = this.grammars;
    if (!grammars) throw new Error("Analyzer.analyzeLoaded called before ready()");
    const started = performance.now();
    const rules = LANGUAGE_RULES[language];
    const { findings, metrics } = grammars.withTree(rules.grammar, code, (root) => ({
      findings: rules.findings(root, code).sort(bySeverityThenLine),
      metrics: countMetrics(root, code, rules.metricNodes),
    }));
    const risk = riskScore(findings);
    return { language, risk, level: riskLevel(risk, findings), findings, metrics, durationMs: performance.now() - started };
  }
}
