// The detectors: every kind of personal data sandgate finds, each checked by a validator, not a
// loose pattern. PLACEHOLDER (contract only): the PII-DETECT helper replaces the body.

import type { CompiledPattern, CustomPattern, DetectOptions, PiiMatch } from "./types.js";

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;

/** Every match of the kinds in `options` in `text`, sorted by start, never overlapping. */
export function detectPii(text: string, options: DetectOptions): PiiMatch[] {
  const out: PiiMatch[] = [];
  if (options.types.includes("email")) {
    for (const m of text.matchAll(EMAIL)) out.push({ type: "email", start: m.index, end: m.index + m[0].length, value: m[0] });
  }
  for (const pattern of options.patterns ?? []) {
    if (!options.types.includes(pattern.name)) continue;
    for (const m of text.matchAll(pattern.regex)) if (m[0].length > 0) out.push({ type: pattern.name, start: m.index, end: m.index + m[0].length, value: m[0] });
  }
  out.sort((a, b) => a.start - b.start || b.end - a.end);
  return out.filter((m, i, all) => i === 0 || m.start >= (all[i - 1]?.end ?? 0));
}

/** Custom patterns compiled once; a pattern that does not compile is a config error naming it. */
export function compilePatterns(patterns: readonly CustomPattern[]): CompiledPattern[] {
  return patterns.map((p) => ({ name: p.name, regex: new RegExp(p.regex, `${(p.flags ?? "").replace(/g/g, "")}g`) }));
}
