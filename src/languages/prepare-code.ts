// Turns a request's code into what a runner executes: the runner kind, the file name shown in
// tracebacks, and for TypeScript/JavaScript the host-side transpile and top-level-await wrap.

import type { Language } from "../config/index.js";
import { prepareJavaScript } from "../sandbox/js-transform.js";
import { NestingTooDeepError } from "../sandbox/nesting.js";
import type { RunnerKind } from "../sandbox/runtime.js";
import { transpileTypeScript, TypeScriptSyntaxError } from "../sandbox/ts-transpile.js";

export interface PreparedCode {
  kind: RunnerKind;
  code: string;
  filename: string;
  mode?: "script" | "async";
}

export type PrepareOutcome = { ok: true; prepared: PreparedCode } | { ok: false; error: { type: string; message: string; traceback: string } };

export function prepareCode(language: Language, code: string): PrepareOutcome {
  switch (language) {
    case "python":
      return { ok: true, prepared: { kind: "python", code, filename: "main.py" } };
    case "bash":
      return { ok: true, prepared: { kind: "bash", code, filename: "main.sh" } };
    case "javascript": {
      let js: ReturnType<typeof prepareJavaScript>;
      try {
        js = prepareJavaScript(code);
      } catch (error) {
        if (error instanceof NestingTooDeepError) return syntaxError("main.js", code, error);
        throw error;
      }
      return { ok: true, prepared: { kind: "javascript", code: js.code, filename: "main.js", mode: js.mode } };
    }
    case "typescript": {
      let js: string;
      try {
        js = transpileTypeScript(code);
      } catch (error) {
        if (error instanceof TypeScriptSyntaxError) return syntaxError("main.ts", code, error);
        throw error;
      }
      let prepared: ReturnType<typeof prepareJavaScript>;
      try {
        prepared = prepareJavaScript(js);
      } catch (error) {
        // sucrase keeps every line where it was, so the position is the user's.
        if (error instanceof NestingTooDeepError) return syntaxError("main.ts", code, error);
        throw error;
      }
      return { ok: true, prepared: { kind: "javascript", code: prepared.code, filename: "main.ts", mode: prepared.mode } };
    }
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
