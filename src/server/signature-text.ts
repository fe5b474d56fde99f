// search_tools' detail "full" as text: the generated TypeScript declarations of a few tools, each
// type printed once (a second identical one refers to the first), without generated boilerplate.

/** What the generator writes on every tool that the `// id` header line or the type's name already says. */
const BOILERPLATE: Array<[RegExp, string]> = [
  [/^\/\*\* (?:Input|Output) of `[^`\n]*`\. \*\/\n/, ""],
  [/\n \*\n \* Tool id: `[^`\n]*`(?=\n \*\/)/, ""],
  // A doc comment left with one line of text fits on one line.
  [/^\/\*\*\n \* ([^\n]*)\n \*\/\n/, "/** $1 */\n"],
  [/^\/\*\* The server declares no output schema[^\n]*\*\/\n(export type [A-Za-z_$][\w$]* = unknown;)$/, "$1 // no output schema"],
];

/** `export interface Name {…}` or `export type Name = …;`, with an optional leading doc comment. */
const DECLARATION = /^((?:\/\*\*[\s\S]*?\*\/\n)?)export (interface|type) ([A-Za-z_$][\w$]*)( = | )([\s\S]*)$/;

/**
 * The declarations of `signatures` (one generated signature per tool, in order), with every
 * type whose body an earlier one has (a tool's output equal to its input, two tools sharing a
 * shape) written as an alias of the first, so identical types are not printed twice.
 */
export function compactSignatures(signatures: readonly string[]): string[] {
  const seen = new Map<string, string>();
  return signatures.map((signature) =>
    signature
      .trimEnd()
      .split("\n\n")
      .map((block) => {
        const cleaned = BOILERPLATE.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), block);
        const match = DECLARATION.exec(cleaned);
        // `unknown` is shorter than any alias of it.
        if (!match || cleaned.endsWith("= unknown; // no output schema")) return cleaned;
        const [, , kind = "", name = "", , body = ""] = match;
        const key = `${kind} ${body.trim()}`;
        const first = seen.get(key);
        if (first !== undefined) return `export type ${name} = ${first};`;
        seen.set(key, name);
        return cleaned;
      })
      .join("\n"),
  );
}
