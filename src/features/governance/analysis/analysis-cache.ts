// The analyses of code analysed lately, keyed by a SHA-256 of who asked, the language and the exact
// code: an agent that sends the same program again is judged without parsing it again.

import { createHash } from "node:crypto";
import type { Language } from "../../../languages/index.js";
import type { Analysis } from "../types.js";

export interface AnalysisCacheOptions {
  /** Analyses kept at most; the least recently used goes first (default 1024). */
  maxEntries?: number;
  /** Findings kept at most over every entry together: a few programs with thousands of findings do not pin memory (default 50,000). */
  maxFindings?: number;
}

/**
 * Only the analysis is kept, never the policy's decision: decide() runs on every call with the policy
 * of that moment, so a changed policy applies to code analysed before it. An analysis that did not
 * finish (a deadline, a worker crash) is never kept: it may finish next time.
 */
export class AnalysisCache {
  private readonly entries = new Map<string, Analysis>();
  private readonly maxEntries: number;
  private readonly maxFindings: number;
  private findings = 0;

  constructor(options: AnalysisCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? 1024;
    this.maxFindings = options.maxFindings ?? 50_000;
  }

  /**
   * The key of `code` as `language` for `owner`. The whole code is hashed (one differing byte is another
   * key); the owner is part of it so that a caller cannot learn from a fast answer that another caller
   * sent the same program. Language names and owners hold no NUL, so the fields cannot run together.
   */
  static key(language: Language, code: string, owner = ""): string {
    return createHash("sha256").update(`${owner}\u0000${language}\u0000`).update(code, "utf8").digest("base64");
  }

  get(key: string): Analysis | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    // Most recently used last: Map keeps insertion order.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }

  set(key: string, analysis: Analysis): void {
    if (analysis.findings.length > this.maxFindings) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.findings -= old.findings.length;
    }
    // Frozen: every caller shares the one object, so none may change it for the next.
    for (const finding of analysis.findings) Object.freeze(finding);
    Object.freeze(analysis.findings);
    Object.freeze(analysis.metrics);
    this.entries.set(key, Object.freeze(analysis));
    this.findings += analysis.findings.length;
    while (this.entries.size > this.maxEntries || this.findings > this.maxFindings) {
      const [oldest, value] = this.entries.entries().next().value as [string, Analysis];
      this.entries.delete(oldest);
      this.findings -= value.findings.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.findings = 0;
  }
}
