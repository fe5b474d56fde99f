// Turns a request's code into what a runner executes: the runner kind, the file name shown in
// tracebacks, and for TypeScript/JavaScript the host-side transpile and top-level-await wrap.

import type { Language } from "../config/index.js";
import { prepareJavaScript } from "../sandbox/js-transform.js";
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
      const js = prepareJavaScript(code);
      return { ok: true, prepared: { kind: "javascript", code: js.code, filename: "main.js", mode: js.mode } };
    }
    case "typescript": {
      let js: string;
      try {
        js = transpileTypeScript(code);
      } catch (error) {
        if (error instanceof TypeScriptSyntaxError) {
          const sourceLine = code.split("\n")[error.line - 1] ?? "";
          return {
            ok: false,
            error: {
              type: "SyntaxError",
              message: error.message,
              traceback: `main.ts:${error.line}:${error.column}\n${sourceLine}\n${" ".repeat(Math.max(0, error.column - 1))}^\n\nSyntaxError: ${error.message}`,
            },
          };
        }
        throw error;
      }
      const prepared = prepareJavaScript(js);
      return { ok: true, prepared: { kind: "javascript", code: prepared.code, filename: "main.ts", mode: prepared.mode } };
    }
  }
}
