// Identifier rules for generated code: raw tool and property names made safe for TypeScript and Python.
// Names are derived deterministically, so the same tool list always yields the same identifiers.

// `index` is reserved because `servers/<server>/index.ts` is taken by the server's re-exports.
const TS_RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for function if " +
    "import in instanceof new null return super switch this throw true try typeof var void while with implements interface let " +
    "package private protected public static yield await arguments eval undefined NaN Infinity callMCPTool index"
  ).split(" "),
);

const PY_KEYWORDS = new Set(
  (
    "False None True and as assert async await break class continue def del elif else except finally for from global if import in " +
    "is lambda nonlocal not or pass raise return try while with yield match case type _"
  ).split(" "),
);

// Builtins and imports the generated Python module itself uses: a wrapper must not shadow them.
const PY_RESERVED = new Set([
  ...PY_KEYWORDS,
  ..."str int float bool list dict tuple object set bytes print call_mcp_tool annotations".split(" "),
]);

/** Splits a raw name into words at camelCase humps, digits stay on their word; `_ - . / space` separate. */
export function splitWords(raw: string): string[] {
  const ascii = raw.normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
  const words: string[] = [];
  for (const chunk of ascii.split(/[^A-Za-z0-9]+/)) {
    for (const match of chunk.matchAll(/[A-Z]+[0-9]*(?![a-z])|[A-Z]?[a-z]+[0-9]*|[0-9]+[a-z]*/g)) words.push(match[0]);
  }
  return words;
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1).toLowerCase();
}

function fallback(words: string[]): string[] {
  return words.length > 0 ? words : ["tool"];
}

function noLeadingDigit(name: string): string {
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

/** `search_issues` → `searchIssues`, `get-env` → `getEnv` (not yet checked against reserved words). */
export function camelCase(raw: string): string {
  const [first = "tool", ...rest] = fallback(splitWords(raw));
  return noLeadingDigit(first.toLowerCase() + rest.map(capitalize).join(""));
}

/** `getDocument` → `get_document`. */
export function snakeCase(raw: string): string {
  return noLeadingDigit(
    fallback(splitWords(raw))
      .map((w) => w.toLowerCase())
      .join("_"),
  );
}

/** `searchIssues` → `SearchIssues`; used for type names derived from identifiers or raw names. */
export function pascalCase(raw: string): string {
  if (/^_?[A-Za-z0-9]+$/.test(raw) && /[A-Za-z]/.test(raw)) return raw.charAt(0).toUpperCase() + raw.slice(1);
  return noLeadingDigit(fallback(splitWords(raw)).map(capitalize).join(""));
}

export function isTsIdentifier(name: string): boolean {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name);
}

export function isPyIdentifier(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !PY_KEYWORDS.has(name);
}

/** A TS identifier that is no reserved word (suffix `_`). */
function safeTsName(name: string): string {
  return TS_RESERVED.has(name) ? `${name}_` : name;
}

/** A Python identifier that is neither a keyword nor a name the generated module relies on (suffix `_`). */
function safePyName(name: string): string {
  return PY_RESERVED.has(name) ? `${name}_` : name;
}

/** Hands out unique names: a taken name gets the suffix 2, 3 … in the order names are asked for. */
export class NameRegistry {
  private readonly used = new Set<string>();

  constructor(reserved: Iterable<string> = []) {
    for (const name of reserved) this.used.add(name);
  }

  claim(base: string): string {
    let name = base;
    for (let n = 2; this.used.has(name); n++) name = `${base}${n}`;
    this.used.add(name);
    return name;
  }

  has(name: string): boolean {
    return this.used.has(name);
  }
}

export interface ToolIdentifiers {
  tsName: string;
  pyName: string;
}

/** TS and Python names for a server's tools, in tool order, unique within the server. */
export function toolIdentifiers(rawNames: readonly string[]): ToolIdentifiers[] {
  const ts = new NameRegistry();
  const py = new NameRegistry();
  return rawNames.map((raw) => ({
    tsName: ts.claim(safeTsName(camelCase(raw))),
    pyName: py.claim(safePyName(snakeCase(raw))),
  }));
}

/** Python module name for a server: `google-drive` → `google_drive`. */
export function pyModuleName(server: string): string {
  return safePyName(snakeCase(server));
}

/** Namespace name for a server in `servers/index.ts`: `google-drive` → `googleDrive`. */
export function tsNamespaceName(server: string): string {
  return safeTsName(camelCase(server));
}

/** Type name prefix for a tool: `searchIssues` → `SearchIssues`. */
export function typePrefix(tsName: string): string {
  return pascalCase(tsName.replace(/_$/, ""));
}

/** The snake_case keyword-argument name for a schema property, or undefined when it has no ASCII words. */
export function pyKwargName(key: string): string | undefined {
  if (splitWords(key).length === 0) return undefined;
  const name = snakeCase(key);
  return PY_KEYWORDS.has(name) ? `${name}_` : name;
}
