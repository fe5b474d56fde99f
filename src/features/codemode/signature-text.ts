// search_tools' detail "full" as text: the generated TypeScript declarations of a few tools, each
// type printed once (a second identical one refers to the first), without generated boilerplate.

import { tokenize } from "./catalog/index.js";

/** What the generator writes on every tool that the `// id` header line or the type's name already says. */
const BOILERPLATE: Array<[RegExp, string]> = [
  [/^\/\*\* (?:Input|Output) of `[^`\n]*`\. \*\/\n/, ""],
  [/\n \*\n \* Tool id: `[^`\n]*`(?=\n \*\/)/, ""],
];

/** A doc comment left with one line of text fits on one line (a declaration's, or an indented property's). */
const ONE_LINE_DOC: [RegExp, string] = [/^( *)\/\*\*\n\1 \* ([^\n]*)\n\1 \*\/$/gm, "$1/** $2 */"];

/** A property's doc comment of one line of text and an `@default` tag. */
const DEFAULT_TAG = /^( *)\/\*\*\n\1 \* ([^\n]*)\n\1 \*\n\1 \* @default ([^\n]*)\n\1 \*\/$/gm;

/** `/** Text (default X) *\/`, or just the text when it already gives the default ("1-20, default 5"). */
function foldDefault(_: string, indent: string, text: string, value: string): string {
  const said = new RegExp(`default:? ${value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w.])`, "i").test(text);
  return `${indent}/** ${said ? text : `${text} (default ${value})`} */`;
}

/** The generator's output type of a tool without an output schema; the function then returns `Promise<unknown>`. */
const NO_OUTPUT = /^\/\*\* The server declares no output schema[^\n]*\*\/\nexport type ([A-Za-z_$][\w$]*) = unknown;$/;

/** `export interface Name {…}` or `export type Name = …;`, with an optional leading doc comment. */
const DECLARATION = /^((?:\/\*\*[\s\S]*?\*\/\n)?)export (interface|type) ([A-Za-z_$][\w$]*)( = | )([\s\S]*)$/;

/** The function's doc comment opening with a title paragraph: `/**\n * Title\n *\n`. */
const TITLE = /^\/\*\*\n \* ([^\n]*)\n \*\n/;

/** Words a title adds that say nothing (`Get Sum Tool`). */
const FILLER = new Set(["tool", "the", "a", "an", "of", "for", "to"]);

/**
 * The function's doc comment without its title paragraph when every word of the title is in the
 * function's name or its description ("Write File" on writeFile, "Read File (Deprecated)" on a
 * description that says DEPRECATED): the title then tells a model nothing new.
 */
function dropRepeatedTitle(block: string): string {
  const title = TITLE.exec(block);
  const fn = /export declare function ([A-Za-z_$][\w$]*)/.exec(block);
  if (!title || !fn) return block;
  const name = (fn[1] ?? "").toLowerCase();
  const known = new Set([...tokenize(fn[1] ?? "", true), ...tokenize(block.slice(title[0].length), true)]);
  // `sequentialthinking` holds "Sequential Thinking" without a hump between the words.
  const repeats = tokenize(title[1] ?? "", true).every((word) => known.has(word) || FILLER.has(word) || name.includes(word));
  return repeats ? `/**\n${block.slice(title[0].length)}` : block;
}

/** The Python wrapper's name, from its generated signature line (`async def name(…`). */
const PY_NAME = /^async def ([A-Za-z_]\w*)\(/;

export interface SignatureParts {
  /** The generated TypeScript declarations (types, doc comment, function). */
  signature: string;
  /** The Python signature line of the generated wrapper. */
  python?: string;
}

/**
 * The declarations of each tool in `tools` (in order), with every type whose body an earlier one
 * has (a tool's output equal to its input, two tools sharing a shape) written as an alias of the
 * first, so identical types are not printed twice; a missing output schema as `Promise<unknown>`;
 * the Python wrapper as a comment on the function line (`// Python: await name(**input)`: its keyword
 * arguments are the input's fields); no `export` keywords.
 */
export function compactSignatures(tools: readonly SignatureParts[]): string[] {
  const seen = new Map<string, string>();
  return tools.map(({ signature, python }) => {
    let unknownOutput: string | undefined;
    const blocks = signature
      .trimEnd()
      .split("\n\n")
      .flatMap((block) => {
        const noOutput = NO_OUTPUT.exec(block);
        if (noOutput) {
          unknownOutput = noOutput[1];
          return [];
        }
        const cleaned = [...BOILERPLATE, ONE_LINE_DOC].reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), block).replace(DEFAULT_TAG, foldDefault);
        const match = DECLARATION.exec(cleaned);
        if (!match) return [cleaned.replace(...ONE_LINE_DOC)];
        const [, , kind = "", name = "", , body = ""] = match;
        const key = `${kind} ${body.trim()}`;
        const first = seen.get(key);
        if (first !== undefined) return [`export type ${name} = ${first};`];
        seen.set(key, name);
        return [cleaned];
      });
    const last = blocks.length - 1;
    let fn = dropRepeatedTitle(blocks[last] ?? "").replace(...ONE_LINE_DOC);
    if (unknownOutput !== undefined) fn = fn.replace(`Promise<${unknownOutput}>`, "Promise<unknown>");
    const pyName = python === undefined ? undefined : PY_NAME.exec(python)?.[1];
    if (pyName !== undefined) fn += ` // Python: await ${pyName}(**input)`;
    else if (python !== undefined) fn += `\n# Python: ${python}`;
    blocks[last] = fn;
    return blocks.join("\n").replace(/^export (?=interface |type |declare function )/gm, "");
  });
}
