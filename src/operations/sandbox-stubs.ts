// The runners' stubs of sandgate's operations, generated from their sandbox surfaces into runners/
// (a Python module, a Node module, sandgate-tool's Bash table) by `npm run stubs`; each sends one generic call.

import { z } from "zod";
import type { AnyOperation } from "./operation.js";
import { unwrapField, type SandboxOperation } from "./sandbox-calls.js";

/** The generated files, by their path under runners/. */
export const STUB_FILES = { python: "sandgate_ops.py", javascript: "node_ops.cjs", bash: "sandgate_ops.sh" } as const;

const HEADER = "Generated from the operations registry by src/operations/sandbox-stubs.ts (npm run stubs): do not edit.";

interface Field {
  name: string;
  /** How Bash passes a --flag's word: as a JSON number, boolean or string, or as JSON text. */
  kind: "number" | "boolean" | "string" | "json";
  required: boolean;
}

function fieldsOf<Host>(operation: AnyOperation<Host>): Field[] {
  const shape = operation.input.shape as Record<string, z.ZodTypeAny>;
  return Object.entries(shape).map(([name, schema]) => {
    if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`operation ${operation.id}: input field ${name} cannot be a parameter in every language`);
    const inner = unwrapField(schema);
    const kind = inner instanceof z.ZodNumber ? "number" : inner instanceof z.ZodBoolean ? "boolean" : inner instanceof z.ZodString || inner instanceof z.ZodEnum ? "string" : "json";
    return { name, kind, required: !schema.isOptional() };
  });
}

/** Positional fields in the surface's order, then the others in the schema's. */
function split<Host>(operation: SandboxOperation<Host>): { positional: Field[]; options: Field[] } {
  const fields = fieldsOf(operation);
  const order = operation.surfaces.sandbox.positional ?? [];
  return {
    positional: order.map((name) => fields.find((f) => f.name === name)!),
    options: fields.filter((f) => !order.includes(f.name)),
  };
}

function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Text for a JS doc comment: nothing that ends it. */
function commentText(text: string): string {
  return text.replaceAll("*/", "* /");
}

/** Text for a Python docstring (which always ends with the operation's id): no backslash escapes, no quotes that end it. */
function docstringText(text: string): string {
  return text.replaceAll("\\", "/").replaceAll('"""', "'''");
}

function python<Host>(operations: readonly SandboxOperation<Host>[]): string {
  const lines = [`# ${HEADER}`, "# Each function calls one of sandgate's operations on the host and returns its answer; a refused or failed", "# call raises ToolError (sandgate.py). The runner puts them beside call_mcp_tool in user code's globals.", "", "import sandgate as _sandgate", ""];
  lines.push(`__all__ = [${operations.map((o) => JSON.stringify(o.surfaces.sandbox.names.python)).join(", ")}]`);
  for (const operation of operations) {
    const { names, doc } = operation.surfaces.sandbox;
    const { positional, options } = split(operation);
    const params = [...positional.map((f) => (f.required ? f.name : `${f.name}=None`)), ...options.map((f) => `${f.name}=None`)];
    const args = [...positional, ...options].map((f) => `${JSON.stringify(f.name)}: ${f.name}`).join(", ");
    const optionNote = options.length > 0 ? ` Options: ${options.map((f) => f.name).join(", ")} (None leaves one out).` : "";
    lines.push("", "", `async def ${names.python}(${params.join(", ")}):`);
    lines.push(`    """${docstringText(doc)}${optionNote} Operation ${operation.id}."""`);
    lines.push(`    return await _sandgate._call_operation(${JSON.stringify(operation.id)}, ${JSON.stringify(names.python)}, {${args}})`);
  }
  return `${lines.join("\n")}\n`;
}

function javascript<Host>(operations: readonly SandboxOperation<Host>[]): string {
  const lines = [
    `// ${HEADER}`,
    "// Each function calls one of sandgate's operations on the host and resolves to its answer; a refused or",
    "// failed call rejects with a ToolError (node_code_mode.cjs). The runner makes them globals of user code.",
    "'use strict';",
    "",
    "/**",
    " * The functions, each sending its call through `call(op, label, caller, usage, options, fixed)`: `options`",
    " * is the options object the caller passed (checked there), `fixed` the positional arguments.",
    " */",
    "module.exports = function operationFunctions(call) {",
  ];
  for (const operation of operations) {
    const { names, doc } = operation.surfaces.sandbox;
    const { positional, options } = split(operation);
    const params = [...positional.map((f) => camel(f.name)), "options"];
    const usage = options.length > 0 ? `${names.javascript}(${params.join(", ")})` : `${names.javascript}(${positional.map((f) => camel(f.name)).join(", ")})`;
    const fixed = positional.map((f) => (camel(f.name) === f.name ? f.name : `${f.name}: ${camel(f.name)}`)).join(", ");
    lines.push(`  /** ${commentText(doc)}${options.length > 0 ? ` Options: ${options.map((f) => f.name).join(", ")}.` : ""} Operation ${operation.id}. */`);
    lines.push(`  function ${names.javascript}(${params.join(", ")}) {`);
    lines.push(`    return call(${quote(operation.id)}, ${quote(names.python)}, ${names.javascript}, ${quote(usage)}, options, ${fixed ? `{ ${fixed} }` : "{}"});`);
    lines.push("  }");
  }
  lines.push(`  return { ${operations.map((o) => o.surfaces.sandbox.names.javascript).join(", ")} };`, "};");
  return `${lines.join("\n")}\n`;
}

function quote(text: string): string {
  return `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

function bash<Host>(operations: readonly SandboxOperation<Host>[]): string {
  const entry = (pick: (operation: SandboxOperation<Host>) => string): string =>
    operations.map((o) => `[${o.surfaces.sandbox.names.bash}]=${shellWord(pick(o))}`).join(" ");
  const usage = (operation: SandboxOperation<Host>): string => {
    const { positional, options } = split(operation);
    return [...positional.map((f) => f.name.toUpperCase()), ...options.map((f) => `[--${f.name} ${f.name.toUpperCase()}]`)].join(" ");
  };
  return [
    `# ${HEADER}`,
    "# Sandgate's operations as flags of sandgate-tool, which sources this file: `sandgate-tool --FLAG WORDS... [--OPTION VALUE]...`",
    "# sends one call of the operation (its id) with WORDS as the positional fields and each OPTION's VALUE as",
    "# JSON of its kind (number, boolean, string; json: the text as given).",
    `declare -A sandgate_op_id=(${entry((o) => o.id)})`,
    `declare -A sandgate_op_label=(${entry((o) => o.surfaces.sandbox.names.python)})`,
    `declare -A sandgate_op_positional=(${entry((o) => split(o).positional.map((f) => f.name).join(" "))})`,
    `declare -A sandgate_op_options=(${entry((o) => split(o).options.map((f) => `${f.name}:${f.kind}`).join(" "))})`,
    `declare -A sandgate_op_usage=(${entry(usage)})`,
    `declare -A sandgate_op_doc=(${entry((o) => o.surfaces.sandbox.doc)})`,
    `sandgate_op_flags=(${operations.map((o) => o.surfaces.sandbox.names.bash).join(" ")})`,
    "",
  ].join("\n");
}

/** A word Bash reads back as `text` exactly: single-quoted, each ' closed, escaped and reopened. */
function shellWord(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** Each generated file's text, keyed by its name under runners/. */
export function sandboxStubs<Host>(operations: readonly SandboxOperation<Host>[]): Record<string, string> {
  return {
    [STUB_FILES.python]: python(operations),
    [STUB_FILES.javascript]: javascript(operations),
    [STUB_FILES.bash]: bash(operations),
  };
}
