// Python wrapper package for a server: TypedDicts for inputs and outputs and one async function per tool.
// Keyword arguments may be snake_case; a per-function table maps them back to the schema's property names.

import { inferredNote, pyDocstring, pyDocText, stringLiteral } from "./doc-text.js";
import { cleanText, isObjectShape, propertiesOf, resolvePointer, type JsonSchema } from "./json-schema.js";
import { pyKwargName, typePrefix } from "./naming.js";
import { emitRootType, newPyModuleTypes, type PyField } from "./py-types.js";
import type { CatalogTool } from "./types.js";

// Only names Python 3.9 has: Ubuntu 22.04 ships 3.10, Debian 11 3.9.
const HEADER_IMPORTS = `from typing import Any, Literal, Optional, TypedDict, Union

from sandgate import call_mcp_tool
`;

const MERGE_HELPER = `def _merge(args: Any, kwargs: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    # Keyword arguments win over the args dict; snake_case names map back to the schema's names.
    if args is not None and not isinstance(args, dict):
        raise TypeError(f"expected a dict of arguments, got {type(args).__name__}")
    merged: dict[str, Any] = dict(args) if args is not None else {}
    for key, value in kwargs.items():
        merged[names.get(key, key)] = value
    return merged
`;

/** snake_case keyword → real property name, only where they differ and the keyword is unambiguous. */
function kwargMapping(propertyNames: readonly string[]): Map<string, string> {
  const real = new Set(propertyNames);
  const used = new Set<string>();
  const out = new Map<string, string>();
  for (const key of propertyNames) {
    const kw = pyKwargName(key);
    if (kw === undefined || kw === key || real.has(kw) || used.has(kw)) continue;
    used.add(kw);
    out.set(kw, key);
  }
  return out;
}

function pyDict(map: ReadonlyMap<string, string>): string {
  return `{${[...map].map(([k, v]) => `${stringLiteral(k)}: ${stringLiteral(v)}`).join(", ")}}`;
}

export interface PyToolNames {
  input: string;
  output: string;
}

/** The signature line shown in search results and used in the module. */
function pySignature(tool: CatalogTool, names: PyToolNames): string {
  return `async def ${tool.pyName}(args: Optional[${names.input}] = None, /, **kwargs: Any) -> ${names.output}`;
}

function parameterDocs(fields: readonly PyField[], mapping: ReadonlyMap<string, string>): string[] {
  const byKey = new Map([...mapping].map(([kw, key]) => [key, kw]));
  return fields.map((f) => {
    const kw = byKey.get(f.key);
    const sent = kw !== undefined ? ` [sent as ${JSON.stringify(f.key)}]` : "";
    const description = cleanText(f.description, 300).replace(/\s+/g, " ");
    return `${kw ?? f.key} (${f.type}${f.required ? ", required" : ""})${sent}${description ? `: ${description}` : ""}`;
  });
}

/** Property names of the input, following a root `$ref` when the input is not a TypedDict itself. */
function inputPropertyNames(schema: JsonSchema, fields: readonly PyField[] | undefined): string[] {
  if (fields !== undefined) return fields.map((f) => f.key);
  const ref = typeof schema.$ref === "string" ? resolvePointer(schema, schema.$ref) : undefined;
  return typeof ref === "object" ? propertiesOf(ref).map(([key]) => key) : [];
}

function functionCode(tool: CatalogTool, names: PyToolNames, fields: readonly PyField[] | undefined): string {
  const mapping = kwargMapping(inputPropertyNames(tool.inputSchema, fields));
  const paragraphs: string[] = [];
  if (tool.title !== undefined && tool.title !== tool.description) paragraphs.push(pyDocText(tool.title));
  if (tool.description !== "") paragraphs.push(pyDocText(tool.description));
  paragraphs.push(pyDocText(`Tool id: ${tool.id}`));
  const params = fields === undefined ? [] : parameterDocs(fields, mapping);
  if (params.length > 0) paragraphs.push(["Args (keyword arguments or the args dict):", ...params.map((p) => `    ${pyDocText(p)}`)].join("\n"));
  const docLines = paragraphs.join("\n\n").split("\n");
  const docstring = `    """${docLines.map((l, i) => (i === 0 || l.trim() === "" ? l.trimEnd() : `    ${l.trimEnd()}`)).join("\n")}\n    """\n`;
  return (
    `${pySignature(tool, names)}:\n${docstring}` +
    `    return await call_mcp_tool(${stringLiteral(tool.id)}, _merge(args, kwargs, ${pyDict(mapping)}))\n`
  );
}

export interface PyModuleResult {
  source: string;
  /** Signature line per tool id. */
  signatures: Map<string, string>;
}

/** The file `python/servers/<py_module>/__init__.py`. */
export function pyModuleFile(server: string, tools: readonly CatalogTool[], description?: string): PyModuleResult {
  const mod = newPyModuleTypes([...tools.map((t) => t.pyName), "Any", "Literal", "Optional", "TypedDict", "Union"]);
  const names = new Map<string, PyToolNames>();
  for (const tool of tools) {
    const prefix = typePrefix(tool.tsName);
    names.set(tool.id, { input: mod.names.claim(`${prefix}Input`), output: mod.names.claim(`${prefix}Output`) });
  }
  const functions: string[] = [];
  const signatures = new Map<string, string>();
  for (const tool of tools) {
    const n = names.get(tool.id);
    if (n === undefined) continue;
    const fields = emitRootType(mod, inputRoot(tool.inputSchema), n.input, typePrefix(tool.tsName), [`Input of ${tool.id}.`]);
    if (tool.outputSchema === undefined) {
      mod.decls.push(`# The server declares no output schema: the result is whatever the tool returns.\n${n.output} = Any\n`);
      mod.defined.add(n.output);
    } else {
      if (tool.outputSchemaInferred) mod.decls.push(`# ${inferredNote(tool)}`);
      emitRootType(mod, tool.outputSchema, n.output, typePrefix(tool.tsName), [`Output of ${tool.id}.`]);
    }
    functions.push(functionCode(tool, n, fields));
    signatures.set(tool.id, pySignature(tool, n));
  }
  const moduleDoc = pyDocstring([`Wrappers for the tools of the MCP server ${JSON.stringify(server)}.`, ...(description ? [description] : []), "Generated by sandgate; do not edit. Each function calls one upstream tool through call_mcp_tool, which the sandbox runtime provides."], "");
  const all = `__all__ = [${tools.map((t) => stringLiteral(t.pyName)).join(", ")}]\n`;
  const source = [moduleDoc + HEADER_IMPORTS, all, MERGE_HELPER, ...mod.decls, ...functions, missingToolHook(server)].join("\n\n");
  return { source: `${source.replace(/\n{3,}/g, "\n\n\n").trimEnd()}\n`, signatures };
}

/** A non-object input schema still gets a dict-typed args parameter. */
function inputRoot(schema: JsonSchema): JsonSchema {
  return isObjectShape(schema) || schema.$ref !== undefined || schema.anyOf !== undefined || schema.oneOf !== undefined || schema.allOf !== undefined ? schema : { type: "object" };
}

/** A module's `__getattr__` for a name it lacks: the error names the server and its tools, as JavaScript's does (server names are letters, digits, _ and -). */
function missingToolHook(server: string): string {
  return `def __getattr__(name: str) -> Any:
    raise AttributeError(f"server '${server}' has no tool {name!r}; its tools are: {', '.join(__all__)}")
`;
}

/** The file `python/servers/__init__.py`. */
export function pyPackageFile(modules: readonly { server: string; pyModule: string }[]): string {
  const listing = modules.map((m) => `    ${pyDocText(`${m.pyModule}: ${m.server}`)}`).join("\n");
  const doc = `"""The connected MCP servers as Python modules: from servers.<module> import <tool>.${listing ? `\n\nModules:\n${listing}\n` : ""}"""\n`;
  // `import servers` then `servers.memory.read_graph()` works as JavaScript's global `servers.memory.readGraph()` does.
  const lazy = `def __getattr__(name):
    if name in __all__:
        import importlib

        return importlib.import_module(__name__ + "." + name)
    raise AttributeError(f"no server module {name!r} in servers; the modules are: {', '.join(__all__)}")
`;
  return `${doc}\n__all__ = [${modules.map((m) => stringLiteral(m.pyModule)).join(", ")}]\n\n\n${lazy}`;
}
