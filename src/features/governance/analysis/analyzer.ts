// The static analysis: parses code with the language's grammar, runs its rules, counts metrics in
// one cursor walk, and scores the findings. An analysis is a risk signal, never the security boundary.

import type { Node } from "web-tree-sitter";
import type { Language } from "../../../languages/index.js";
import { riskLevel, riskScore } from "../risk.js";
import { SEVERITIES, type Analysis, type CodeMetrics, type Finding } from "../types.js";
import { bashRules } from "./bash.js";
import { FoldLimitExceeded, withFoldBudget } from "./fold-budget.js";
import { Grammars } from "./grammars.js";
import { javascriptRules, typescriptRules } from "./javascript.js";
import { splitPythonMagics } from "./python-magics.js";
import { pythonRules } from "./python.js";
import type { FoundNode, LanguageRules, MetricNodeTypes, WalkCounts } from "./rules.js";
import { AnalysisCache } from "./analysis-cache.js";
import { AnalysisPool } from "./worker-pool.js";

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

/** Each language's metric node types by kind, built once. */
const METRIC_KINDS = new WeakMap<MetricNodeTypes, Map<string, keyof MetricNodeTypes>>();

function metricKinds(types: MetricNodeTypes): Map<string, keyof MetricNodeTypes> {
  let kinds = METRIC_KINDS.get(types);
  if (!kinds) {
    kinds = new Map();
    for (const key of ["function", "call", "import", "branch"] as const) for (const type of types[key]) kinds.set(type, key);
    METRIC_KINDS.set(types, kinds);
  }
  return kinds;
}

/** The type list of each search: the metric types joined with a rules file's searchTypes() array. */
const SEARCHES = new WeakMap<Map<string, keyof MetricNodeTypes>, WeakMap<readonly string[], string[]>>();
const NO_TYPES: readonly string[] = [];

function searchList(kinds: Map<string, keyof MetricNodeTypes>, extra: readonly string[]): string[] {
  let byExtra = SEARCHES.get(kinds);
  if (!byExtra) SEARCHES.set(kinds, (byExtra = new WeakMap()));
  let types = byExtra.get(extra);
  if (!types) byExtra.set(extra, (types = [...new Set([...kinds.keys(), ...extra])]));
  return types;
}

/**
 * One search inside the wasm module (descendantsOfType) gives both the metric nodes and the nodes the
 * rules start from: a walk over every node from JavaScript costs about as much as the parse itself.
 */
function search(root: Node, source: string, rules: LanguageRules): FoundNode[] {
  const types = searchList(metricKinds(rules.metricNodes), rules.searchTypes?.(source) ?? NO_TYPES);
  if (types.length === 0) return [];
  return root.descendantsOfType(types).map((node) => ({ node, type: node.type }));
}

/** Counts from the search, or from the rules' own walk (`walked`). */
function countMetrics(root: Node, source: string, kinds: Map<string, keyof MetricNodeTypes>, found: readonly FoundNode[], walked?: WalkCounts): CodeMetrics {
  const counts = walked ?? { function: 0, call: 0, import: 0, branch: 0, maxDepth: 0 };
  if (!walked) {
    const nesting: Node[] = [];
    for (const { node, type } of found) {
      const kind = kinds.get(type);
      if (!kind) continue;
      counts[kind]++;
      if (kind === "function" || kind === "branch") nesting.push(node);
    }
    counts.maxDepth = maxNesting(nesting);
  }
  const errors = root.hasError ? Math.max(1, root.descendantsOfType("ERROR").length) : 0;
  return {
    lines: source === "" ? 0 : source.split("\n").length,
    bytes: Buffer.byteLength(source, "utf8"),
    functions: counts.function,
    calls: counts.call,
    imports: counts.import,
    cyclomatic: counts.branch + 1,
    maxDepth: counts.maxDepth,
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

export interface AnalyzerOptions {
  /**
   * Analyse in worker threads, each analysis at most this long (security.analysisTimeoutMs): code that
   * makes the analysis hang or crash then fails its analysis instead of stalling the server. Without it
   * (library, tests, benches) analysis runs inline.
   */
  timeoutMs?: number;
  /** Worker threads at most (default 2). */
  workers?: number;
  /** Analyses kept for code sent again (default 1024; 0 keeps none). */
  cacheEntries?: number;
}

/** Rule id of the finding an analysis that did not finish gives instead of its own. */
export const ANALYSIS_FAILED_RULE = "analysis.failed";

/**
 * The analysis of code whose analysis did not finish: one critical finding, so that padding code until
 * its analysis fails never turns a block into a run (standard and strict block it, permissive warns).
 */
/** Findings and metrics of `code` as `language`, from one syntax tree. */
function analyzeTree(grammars: Grammars, language: Language, code: string): { findings: Finding[]; metrics: CodeMetrics } {
  const rules = LANGUAGE_RULES[language];
  return grammars.withTree(rules.grammar, code, (root) => {
    const counts: WalkCounts | undefined = rules.walkCounts ? { function: 0, call: 0, import: 0, branch: 0, maxDepth: 0 } : undefined;
    const found = counts ? [] : search(root, code, rules);
    const findings = rules.findings(root, code, found, counts).sort(bySeverityThenLine);
    return { findings, metrics: countMetrics(root, code, metricKinds(rules.metricNodes), found, counts) };
  });
}

export function failedAnalysis(language: Language, code: string, reason: string, durationMs: number): Analysis {
  const finding: Finding = {
    ruleId: ANALYSIS_FAILED_RULE,
    category: "obfuscation",
    severity: "critical",
    line: 1,
    endLine: Math.max(1, code.split("\n").length),
    column: 1,
    message: `the code could not be analysed (${reason}), so it was not checked`,
    recommendation: "Send plainer code: smaller, less deeply nested, without huge generated expressions.",
  };
  const metrics: CodeMetrics = { lines: code === "" ? 0 : code.split("\n").length, bytes: Buffer.byteLength(code, "utf8"), functions: 0, calls: 0, imports: 0, cyclomatic: 1, maxDepth: 0, parseErrors: 0 };
  const risk = riskScore([finding]);
  return { language, risk, level: riskLevel(risk, [finding]), findings: [finding], metrics, durationMs };
}

/** Code shorter than this (characters) is analysed inline: a worker's round trip would cost more than its worst case. */
const INLINE_BELOW = 512;

export class Analyzer {
  private grammars: Grammars | undefined;
  private loading: Promise<Grammars> | undefined;
  private readonly pool: AnalysisPool | undefined;
  /** Analyses of code analysed lately, by owner, language and code (see AnalysisCache). */
  private readonly cache: AnalysisCache | undefined;

  constructor(options: AnalyzerOptions = {}) {
    this.pool = options.timeoutMs !== undefined ? AnalysisPool.create(options.workers ?? 2, options.timeoutMs) : undefined;
    const entries = options.cacheEntries ?? 1024;
    this.cache = entries > 0 ? new AnalysisCache({ maxEntries: entries }) : undefined;
  }

  /** Loads the grammars (a few tens of ms, once per process); analyze() does it on first use. */
  async ready(): Promise<void> {
    this.pool?.warm();
    this.grammars ??= await (this.loading ??= Grammars.load());
  }

  /**
   * Analyses `code` as `language` (a resolved name, not an alias), in a worker when the analyzer has
   * a timeout; never throws for the code's sake: an analysis that fails gives failedAnalysis(). The
   * same code sent again by the same owner gets the analysis kept from the first time.
   */
  async analyze(language: Language, code: string, options: { inline?: boolean; owner?: string } = {}): Promise<Analysis> {
    const started = performance.now();
    const key = this.cache ? AnalysisCache.key(language, code, options.owner) : undefined;
    const kept = key !== undefined ? this.cache?.get(key) : undefined;
    if (kept) return { ...kept, durationMs: performance.now() - started };
    try {
      let analysis: Analysis;
      if (this.pool && !options.inline && code.length >= INLINE_BELOW) analysis = await this.pool.analyze(language, code, options.owner);
      else {
        if (!this.grammars) await this.ready();
        analysis = this.analyzeLoaded(language, code);
      }
      if (key !== undefined && !analysis.findings.some((f) => f.ruleId === ANALYSIS_FAILED_RULE)) this.cache?.set(key, { ...analysis });
      return analysis;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return failedAnalysis(language, code, reason, performance.now() - started);
    }
  }

  /** Ends the analysis workers, if any. */
  async close(): Promise<void> {
    await this.pool?.close();
  }

  /** analyze() without waiting: for callers that awaited ready() (benches, hot paths). */
  analyzeLoaded(language: Language, code: string): Analysis {
    const grammars = this.grammars;
    if (!grammars) throw new Error("Analyzer.analyzeLoaded called before ready()");
    const started = performance.now();
    let result: { findings: Finding[]; metrics: CodeMetrics };
    try {
      result = withFoldBudget(code, () => {
        // Notebook lines of Python (`!cmd`, `%%bash`) run shell: that shell is judged as Bash.
        const magics = language === "python" ? splitPythonMagics(code) : undefined;
        if (!magics) return analyzeTree(grammars, language, code);
        const python = analyzeTree(grammars, "python", magics.python);
        const shell = analyzeTree(grammars, "bash", magics.shell);
        return { findings: [...python.findings, ...shell.findings].sort(bySeverityThenLine), metrics: python.metrics };
      });
    } catch (error) {
      // Code built to make the analysis fold huge strings is refused like code that cannot be analysed.
      if (error instanceof FoldLimitExceeded) return failedAnalysis(language, code, error.message, performance.now() - started);
      throw error;
    }
    const { findings, metrics } = result;
    const risk = riskScore(findings);
    return { language, risk, level: riskLevel(risk, findings), findings, metrics, durationMs: performance.now() - started };
  }
}
