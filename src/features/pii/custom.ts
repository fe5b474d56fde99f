// Custom patterns from config: compiled once, refused when they cannot compile or can backtrack
// without bound, and run over bounded windows of a text so one pattern cannot stall a scan.

import { setFlagsFromString } from "node:v8";
import { SandgateError } from "../../errors/index.js";
import type { CompiledPattern, CustomPattern } from "./types.js";
import type { Span } from "./kinds/span.js";

/** A custom pattern sees at most this many characters at once (one line, or a slice of a long one). */
const WINDOW = 4096;
/** Consecutive windows of a long line overlap so a value across a cut is still found whole. */
const OVERLAP = 256;
/**
 * A window that takes longer than this moves its pattern to the linear-time engine (an ordinary one
 * takes microseconds): V8 falls back by itself only after many backtracks at one start position, not
 * for `[a-z]+@` retried at every position of a run of letters, which costs a window its length squared.
 */
const SLOW_WINDOW_MS = 20;

// V8's linear-time engine: a pattern it can run (no i or u flag, lookaround or back reference) moves
// to it once it backtracks too much, so `(a|a)*b` on a long run of `a` cannot hold the process.
let linearEngine = false;
function enableLinearEngine(): void {
  if (linearEngine) return;
  linearEngine = true;
  setFlagsFromString("--enable-experimental-regexp-engine");
  setFlagsFromString("--enable-experimental-regexp-engine-on-excessive-backtracks");
}

/** Whether V8's linear-time engine can run `source` with `flags` (then backtracking cannot run away). */
function runsLinear(source: string, flags: string): boolean {
  try {
    new RegExp(source, `${flags}l`);
    return true;
  } catch {
    return false;
  }
}

/** Custom patterns compiled once; a pattern that does not compile is a config error naming it. */
export function compilePatterns(patterns: readonly CustomPattern[]): CompiledPattern[] {
  if (patterns.length > 0) enableLinearEngine();
  return patterns.map((p) => {
    const flags = [...new Set((p.flags ?? "").replace(/[gy]/g, ""))].join("");
    const nested = nestedQuantifier(p.regex, false);
    if (nested) {
      throw new SandgateError("CONFIG_INVALID", `pii.patterns: pattern "${p.name}" repeats a group that itself repeats (${nested}); it can take exponential time on some texts, rewrite it without the nested quantifier`, {
        data: { pattern: p.name },
      });
    }
    // Alternatives that may match the same text, repeated, are as slow: refused where the linear engine cannot take over.
    const ambiguous = nestedQuantifier(p.regex, true);
    if (ambiguous && !runsLinear(p.regex, flags)) {
      throw new SandgateError(
        "CONFIG_INVALID",
        `pii.patterns: pattern "${p.name}" repeats a group with alternatives or optional parts (${ambiguous}); with its flags or features it can take exponential time on some texts, rewrite the group as a character class or without the repetition`,
        { data: { pattern: p.name } },
      );
    }
    try {
      const regex = new RegExp(p.regex, `${flags}g`);
      return runsLinear(p.regex, flags) ? { name: p.name, regex, linear: new RegExp(p.regex, `${flags}gl`) } : { name: p.name, regex };
    } catch (error) {
      throw new SandgateError("CONFIG_INVALID", `pii.patterns: pattern "${p.name}" is not a valid regular expression: ${(error as Error).message}`, {
        data: { pattern: p.name },
        cause: error,
      });
    }
  });
}

/** Every match of a custom pattern, found line by line (long lines in overlapping windows). */
export function findCustom(pattern: CompiledPattern, text: string): Span[] {
  const out: Span[] = [];
  let lineStart = 0;
  while (lineStart <= text.length) {
    let lineEnd = text.indexOf("\n", lineStart);
    if (lineEnd === -1) lineEnd = text.length;
    for (let from = lineStart; from < lineEnd; from += WINDOW - OVERLAP) {
      const to = Math.min(lineEnd, from + WINDOW);
      const window = text.slice(from, to);
      const regex = pattern.regex;
      const started = performance.now();
      regex.lastIndex = 0;
      for (let m = regex.exec(window); m !== null; m = regex.exec(window)) {
        if (m[0].length === 0) {
          regex.lastIndex++;
          continue;
        }
        out.push({ start: from + m.index, end: from + m.index + m[0].length });
      }
      if (pattern.linear && regex !== pattern.linear && performance.now() - started > SLOW_WINDOW_MS) pattern.regex = pattern.linear;
      if (to === lineEnd) break;
    }
    lineStart = lineEnd + 1;
  }
  return out;
}

/**
 * The first group that is repeated and contains a repetition itself (`(a+)+`, `(\w*)*`, `(x+){2,}`),
 * the classic shape of catastrophic backtracking; with `alternatives`, also one that holds a `|` or
 * an optional part (`(a|a)*`, `(?:a|a?)+`); undefined when there is none.
 */
function nestedQuantifier(source: string, alternatives: boolean): string | undefined {
  const open: { at: number; repeats: boolean }[] = [];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "(") open.push({ at: i, repeats: false });
    else if (alternatives && (c === "|" || (c === "?" && source[i - 1] !== "("))) {
      const top = open[open.length - 1];
      if (top) top.repeats = true;
    }
    else if ((c === "+" || c === "*" || (c === "{" && /^\{\d+,\d*\}/.test(source.slice(i)) && !/^\{(\d+),\1\}/.test(source.slice(i)))) && source[i - 1] !== "(") {
      const top = open[open.length - 1];
      if (top) top.repeats = true;
    } else if (c === ")") {
      const group = open.pop();
      if (!group) continue;
      const next = source[i + 1];
      const quantified = next === "+" || next === "*" || (next === "{" && /^\{\d+,\d*\}/.test(source.slice(i + 1)) && !/^\{(\d+),\1\}/.test(source.slice(i + 1)));
      if (group.repeats && quantified) return source.slice(group.at, i + 2);
      const parent = open[open.length - 1];
      if (parent && (group.repeats || quantified)) parent.repeats = true;
    }
  }
  return undefined;
}
