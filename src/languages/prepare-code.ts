// Turns a request's code into what a runner executes: the runner kind, the file name shown in
// tracebacks, and a syntax error found on the host shown the way the runner would show it.

import { NestingTooDeepError } from "./nesting.js";
import type { JavaScriptMode } from "./js-transform.js";
import type { RunnerKind } from "./names.js";
import { TypeScriptSyntaxError } from "./ts-transpile.js";

export interface PreparedCode {
  kind: RunnerKind;
  code: string;
  filename: string;
  mode?: JavaScriptMode;
  /** The code as the user wrote it, when `code` is a rewrite of it (the runner shows its lines in errors). */
  source?: string;
}

export type PrepareOutcome = { ok: true; prepared: PreparedCode } | { ok: false; error: { type: string; message: string; traceback: string } };

/**
 * Runs a host-side transform of the user's code for `kind`; a syntax error it finds (or code too
 * deeply nested to parse) becomes the outcome, at the user's own line and column.
 */
export function prepareOnHost(kind: RunnerKind, filename: string, code: string, transform: (code: string) => Omit<PreparedCode, "kind" | "filename">): PrepareOutcome {
  try {
    const prepared = transform(code);
    return { ok: true, prepared: { kind, filename, ...prepared, ...(prepared.code !== code ? { source: code } : {}) } };
  } catch (error) {
    // The transforms keep every line where it was, so the position is the user's.
    if (error instanceof NestingTooDeepError || error instanceof TypeScriptSyntaxError) return syntaxError(filename, code, error);
    throw error;
  }
}

/** A syntax error found on the host, shown like the runner shows one: file, line, caret. */
function syntaxError(filename: string, code: string, error: { message: string; line: number; column: number }): PrepareOutcome {
  // The line alone, cut short: a 100,000-character line of brackets is no help in a traceback.
  const sourceLine = (code.split("\n", error.line)[error.line - 1] ?? "").slice(0, 200);
  const caret = " ".repeat(Math.max(0, Math.min(error.column - 1, sourceLine.length)));
  return {
    ok: false,
    error: {
      type: "SyntaxError",
      message: error.message,
      traceback: `${filename}:${error.line}:${error.column}\n${sourceLine}\n${caret}^\n\nSyntaxError: ${error.message}`,
    },
  };
}
