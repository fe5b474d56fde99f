// TypeScript to JavaScript on the host, before the Node runner sees the code: types are stripped
// by sucrase, which keeps every line where it was, and parse errors carry the user's position.
import { transform } from "sucrase";
import { isStackOverflow, nestingError } from "./nesting.js";

export class TypeScriptSyntaxError extends Error {
  override readonly name = "TypeScriptSyntaxError";

  constructor(
    message: string,
    /** 1-based line in the user's code. */
    readonly line: number,
    /** 1-based column in the user's code. */
    readonly column: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export function transpileTypeScript(code: string): string {
  try {
    // Node 20 runs modern syntax as is; sucrase's ES transforms would only add helpers.
    return transform(code, { transforms: ["typescript"], disableESTransforms: true }).code;
  } catch (error) {
    if (isStackOverflow(error)) {
      const deep = nestingError(code);
      throw new TypeScriptSyntaxError(deep.message, deep.line, deep.column, { cause: error });
    }
    const loc = parseErrorLocation(error);
    if (!loc) throw error;
    // sucrase appends " (line:column)" to its message; the position travels in fields instead.
    const message = (error as Error).message.replace(/ \(\d+:\d+\)$/, "");
    throw new TypeScriptSyntaxError(message, loc.line, loc.column, { cause: error });
  }
}

/** sucrase marks parse errors with `loc: { line, column }`, both 1-based. */
function parseErrorLocation(error: unknown): { line: number; column: number } | undefined {
  if (!(error instanceof Error) || !("loc" in error)) return undefined;
  const loc = error.loc as { line?: unknown; column?: unknown } | null | undefined;
  if (typeof loc?.line !== "number" || typeof loc.column !== "number") return undefined;
  return { line: loc.line, column: loc.column };
}
