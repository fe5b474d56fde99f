// Comment and docstring text for generated code: upstream descriptions made inert in TS comments and Python strings.
// A description may contain anything (`*/`, `"""`, backslashes, control characters); none of it may end the comment early.

import { cleanText } from "./json-schema.js";

/** A JSDoc block for `lines` (empty lines kept as paragraph breaks), or "" when there is nothing to say. */
export function tsDocComment(lines: readonly string[], indent = ""): string {
  const text = lines
    .map((l) => cleanText(l))
    .filter((l) => l !== "")
    .join("\n\n")
    .replace(/\*\//g, "*\\/");
  if (text === "") return "";
  const body = text.split("\n");
  if (body.length === 1 && text.length <= 100) return `${indent}/** ${text} */\n`;
  return `${indent}/**\n${body.map((l) => (l.trim() === "" ? `${indent} *` : `${indent} * ${l.trimEnd()}`)).join("\n")}\n${indent} */\n`;
}

/** Text safe inside a Python `"""…"""` literal: backslashes doubled, no closing quote run, no trailing quote. */
export function pyDocText(text: string): string {
  return cleanText(text)
    .replace(/\\/g, "\\\\")
    .replace(/"(?=")/g, '\\"')
    .replace(/"$/, '\\"');
}

/** A Python docstring indented by `indent`, or "" when there is nothing to say. */
export function pyDocstring(lines: readonly string[], indent: string): string {
  const text = lines
    .map((l) => pyDocText(l))
    .filter((l) => l !== "")
    .join("\n\n");
  if (text === "") return "";
  const body = text.split("\n").map((l, i) => (i === 0 || l.trim() === "" ? l.trimEnd() : `${indent}${l.trimEnd()}`));
  return `${indent}"""${body.join("\n")}${body.length > 1 ? `\n${indent}` : ""}"""\n`;
}

/** One comment line for Python (`# …`) with newlines folded. */
export function pyLineComment(text: string, indent: string): string {
  const flat = cleanText(text, 400).replace(/\s+/g, " ");
  return flat === "" ? "" : `${indent}# ${flat}\n`;
}

/** A string literal valid in both TypeScript and Python source. */
export function stringLiteral(value: string): string {
  // JSON escapes are a subset of both languages' escapes; U+2028/9 are escaped for older parsers.
  return JSON.stringify(value).replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

/** `inferred from 3 responses`: marks an output type sandgate guessed from real results. */
export function inferredNote(tool: { outputSchemaResponses?: number }): string {
  const n = tool.outputSchemaResponses ?? 1;
  return `inferred from ${n} response${n === 1 ? "" : "s"}`;
}
