// TypeScript wrapper files for a server: one file per tool with its types and function, plus an index.
// Files type-check standalone under `tsc --strict`; `callMCPTool` is declared, the sandbox runtime provides it.

import { cleanText, definitionsOf, isObjectShape, requiredOf, schemaList, type JsonSchema } from "./json-schema.js";
import { inferredNote, tsDocComment, stringLiteral } from "./doc-text.js";
import { NameRegistry, pascalCase, typePrefix } from "./naming.js";
import { newTsContext, renderMembers, schemaDocLines, tsTypeOf, type TsTypeContext } from "./ts-types.js";
import type { CatalogTool } from "./types.js";

/** Declared type names of one tool, unique across its server. */
export interface TsToolNames {
  input: string;
  output: string;
  inputDefs: Map<string, string>;
  outputDefs: Map<string, string>;
}

/** Type names for all tools of a server; Input/Output names are claimed before any definition name. */
export function planTsNames(tools: readonly CatalogTool[]): Map<string, TsToolNames> {
  const registry = new NameRegistry(["callMCPTool", "Promise", "Record", "Array"]);
  const plans = new Map<string, TsToolNames>();
  for (const tool of tools) {
    const prefix = typePrefix(tool.tsName);
    plans.set(tool.id, { input: registry.claim(`${prefix}Input`), output: registry.claim(`${prefix}Output`), inputDefs: new Map(), outputDefs: new Map() });
  }
  for (const tool of tools) {
    const plan = plans.get(tool.id);
    if (plan === undefined) continue;
    const prefix = typePrefix(tool.tsName);
    for (const [name] of definitionsOf(tool.inputSchema)) plan.inputDefs.set(name, registry.claim(`${prefix}${pascalCase(name)}`));
    for (const [name] of tool.outputSchema === undefined ? [] : definitionsOf(tool.outputSchema)) {
      plan.outputDefs.set(name, registry.claim(`${prefix}${pascalCase(name)}`));
    }
  }
  return plans;
}

interface Declaration {
  name: string;
  text: string;
  directRefs: Set<string>;
}

/** `export interface` for plain object shapes, `export type` for everything else. */
function declare(name: string, schema: JsonSchema, ctx: TsTypeContext, doc: string[]): Declaration {
  ctx.directRefs = new Set();
  const comment = tsDocComment(doc);
  const plain = isObjectShape(schema) && schema.$ref === undefined && ["anyOf", "oneOf", "allOf"].every((k) => schemaList(schema, k).length === 0);
  if (plain && !Array.isArray(schema.enum) && !Object.hasOwn(schema, "const")) {
    const { lines, extra } = renderMembers(schema, ctx, 0, "  ");
    if (extra === undefined) return { name, text: `${comment}export interface ${name} {\n${lines}}\n`, directRefs: ctx.directRefs };
  }
  return { name, text: `${comment}export type ${name} = ${tsTypeOf(schema, ctx)};\n`, directRefs: ctx.directRefs };
}

/** Replaces declarations that alias themselves without an object in between (`type A = B; type B = A`). */
function breakCycles(decls: Declaration[]): Declaration[] {
  const byName = new Map(decls.map((d) => [d.name, d]));
  const cyclic = (start: string): boolean => {
    const seen = new Set<string>();
    const stack = [...(byName.get(start)?.directRefs ?? [])];
    while (stack.length > 0) {
      const next = stack.pop() ?? "";
      if (next === start) return true;
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push(...(byName.get(next)?.directRefs ?? []));
    }
    return false;
  };
  return decls.map((d) =>
    cyclic(d.name) ? { ...d, text: `/** The schema defines this type only in terms of itself. */\nexport type ${d.name} = unknown;\n` } : d,
  );
}

function schemaDeclarations(root: JsonSchema, rootName: string, defs: Map<string, string>, doc: string[]): Declaration[] {
  const ctx = newTsContext(root, rootName, defs);
  const out: Declaration[] = [];
  for (const [raw, node] of definitionsOf(root)) {
    const name = defs.get(raw);
    if (name === undefined) continue;
    if (node === false) out.push({ name, text: `export type ${name} = never;\n`, directRefs: new Set() });
    else out.push(declare(name, node === true ? {} : node, ctx, schemaDocLines(node)));
  }
  out.push(declare(rootName, root, ctx, doc));
  return out;
}

/** True when the function may be called without an input object. */
function inputOptional(tool: CatalogTool): boolean {
  return isObjectShape(tool.inputSchema) && requiredOf(tool.inputSchema).size === 0 && tool.inputSchema.$ref === undefined;
}

export interface TsToolCode {
  /** Type declarations (definitions, input, output) without the file header. */
  types: string;
  /** The function's doc comment. */
  doc: string;
  /** `(input: XInput): Promise<XOutput>` */
  params: string;
}

function toolCode(tool: CatalogTool, names: TsToolNames): TsToolCode {
  const decls = schemaDeclarations(tool.inputSchema, names.input, names.inputDefs, [`Input of \`${tool.id}\`.`]);
  if (tool.outputSchema === undefined) {
    decls.push({ name: names.output, text: `/** The server declares no output schema: the result is whatever the tool returns. */\nexport type ${names.output} = unknown;\n`, directRefs: new Set() });
  } else {
    const doc = [`Output of \`${tool.id}\`.`];
    const out = schemaDeclarations(tool.outputSchema, names.output, names.outputDefs, doc);
    const last = out[out.length - 1];
    if (tool.outputSchemaInferred && last !== undefined) last.text = `// ${inferredNote(tool)}\n${last.text}`;
    decls.push(...out);
  }
  const description = tool.description !== "" ? tool.description : (tool.title ?? "");
  const doc = tsDocComment([...(tool.title !== undefined && tool.title !== description ? [tool.title] : []), description, `Tool id: \`${tool.id}\``]);
  const optional = inputOptional(tool) ? "?" : "";
  return {
    types: breakCycles(decls).map((d) => d.text).join("\n"),
    doc,
    params: `(input${optional}: ${names.input}): Promise<${names.output}>`,
  };
}

/** The declaration-only form shown in search results. */
export function toolSignature(tool: CatalogTool, names: TsToolNames): string {
  const code = toolCode(tool, names);
  return `${code.types}\n${code.doc}export declare function ${tool.tsName}${code.params};\n`;
}

/** The file `servers/<server>/<tsName>.ts`. */
export function toolFile(tool: CatalogTool, names: TsToolNames): string {
  const code = toolCode(tool, names);
  const args = inputOptional(tool) ? "input ?? {}" : "input";
  return (
    `// Generated by sandgate from the MCP tool ${stringLiteral(tool.id)}; do not edit.\n` +
    `// callMCPTool is provided by the sandbox runtime and sends the call to the host.\n\n` +
    `declare function callMCPTool(id: string, args: object): Promise<unknown>;\n\n` +
    `${code.types}\n${code.doc}` +
    `export async function ${tool.tsName}${code.params} {\n` +
    `  return (await callMCPTool(${stringLiteral(tool.id)}, ${args})) as ${names.output};\n}\n`
  );
}

/** The file `servers/<server>/index.ts`: explicit re-exports of every tool and its types. */
export function serverIndexFile(server: string, tools: readonly CatalogTool[], plans: Map<string, TsToolNames>, description?: string): string {
  let out = `// Generated by sandgate: the tools of the MCP server ${stringLiteral(server)}; do not edit.\n`;
  out += `// Import as "sandgate:servers/${server}"; each function calls one upstream tool.\n`;
  const about = cleanText(description ?? "", 500).replace(/\s+/g, " ");
  if (about !== "") out += `// ${about}\n`;
  for (const tool of tools) {
    const plan = plans.get(tool.id);
    if (plan === undefined) continue;
    const types = [plan.input, plan.output, ...plan.inputDefs.values(), ...plan.outputDefs.values()].map((t) => `type ${t}`);
    out += `export { ${[tool.tsName, ...types].join(", ")} } from "./${tool.tsName}.js";\n`;
  }
  return out;
}

/** The file `servers/index.ts`: one namespace per server. */
export function serversIndexFile(servers: readonly { name: string; namespace: string }[]): string {
  let out = "// Generated by sandgate: every connected MCP server as a namespace; do not edit.\n// Prefer importing one server: import { … } from \"sandgate:servers/<server>\".\n";
  for (const s of servers) out += `export * as ${s.namespace} from "./${s.name}/index.js";\n`;
  if (servers.length === 0) out += "export {};\n";
  return out;
}
