// JSON Schema → Python type annotations, emitting a TypedDict for every object shape it meets.
// Declarations are appended to a module-wide list in dependency order; names not yet defined are quoted.
// Everything emitted evaluates on Python 3.9: Optional/Union instead of `X | Y`, and no NotRequired.

import {
  SCHEMA_LIMITS,
  asSchema,
  defNameOf,
  definitionsOf,
  isObject,
  isObjectShape,
  propertiesOf,
  requiredOf,
  resolvePointer,
  schemaList,
  stringOf,
  typesOf,
  type JsonSchema,
  type SchemaNode,
} from "./json-schema.js";
import { pyDocstring, pyLineComment, stringLiteral } from "./doc-text.js";
import { NameRegistry, isPyIdentifier, pascalCase } from "./naming.js";

/** Declarations shared by all tools of one Python module. */
export interface PyModuleTypes {
  names: NameRegistry;
  /** Type declarations in emission order. */
  decls: string[];
  /** Names whose declaration has been emitted (later references need no quotes). */
  defined: Set<string>;
}

export function newPyModuleTypes(reserved: Iterable<string>): PyModuleTypes {
  return { names: new NameRegistry(reserved), decls: [], defined: new Set() };
}

interface PyContext {
  mod: PyModuleTypes;
  root: JsonSchema;
  rootName: string;
  /** Prefix for names of definitions and nested shapes (the tool's type prefix). */
  prefix: string;
  /** Raw definition name → Python name, claimed on first use. */
  defNames: Map<string, string>;
  nodes: number;
  inlineRefs: string[];
}

interface Py {
  text: string;
}

const MAX_NAME = 64;

const ANY: Py = { text: "Any" };
const plain = (text: string): Py => ({ text });

function nameRef(ctx: PyContext, name: string): Py {
  return plain(ctx.mod.defined.has(name) ? name : stringLiteral(name));
}

/** `Optional[X]` or `Union[...]`: the `|` operator on types raises at import before Python 3.10. */
function union(members: Py[]): Py {
  const out: Py[] = [];
  for (const m of members) {
    if (m.text === "Any") return ANY;
    if (!out.some((o) => o.text === m.text)) out.push(m);
  }
  if (out.length === 0) return ANY;
  if (out.length === 1) return out[0] ?? ANY;
  const rest = out.filter((m) => m.text !== "None");
  if (rest.length === 1 && rest.length < out.length) return plain(`Optional[${rest[0]!.text}]`);
  return plain(`Union[${out.map((m) => m.text).join(", ")}]`);
}

function literalValue(value: unknown): string | undefined {
  if (typeof value === "string") return stringLiteral(value);
  if (typeof value === "number" && Number.isInteger(value)) return String(value);
  if (typeof value === "boolean") return value ? "True" : "False";
  if (value === null) return "None";
  return undefined;
}

function renderEnum(values: unknown[]): Py {
  const literals = values.map(literalValue);
  if (values.length === 0 || values.length > SCHEMA_LIMITS.maxEnum || literals.some((l) => l === undefined)) {
    return union(values.map((v) => plain(typeof v === "string" ? "str" : typeof v === "boolean" ? "bool" : typeof v === "number" ? "float" : v === null ? "None" : "Any")));
  }
  return plain(`Literal[${literals.join(", ")}]`);
}

/** One field of an emitted TypedDict. */
export interface PyField {
  key: string;
  /** The annotation. */
  type: string;
  required: boolean;
  description: string;
}

/** One TypedDict declaration (class syntax when every key can be an attribute name). */
function emitTypedDict(ctx: PyContext, name: string, schema: JsonSchema, depth: number, doc: string[]): PyField[] {
  const required = new Set([...requiredOf(schema), ...requiredOfAllOf(schema, ctx)]);
  const fields: PyField[] = [];
  for (const [key, prop] of mergedProperties(schema, ctx)) {
    const type = render(prop, ctx, depth + 1, `${name}${pascalCase(key)}`);
    const description = typeof prop === "boolean" ? undefined : (stringOf(prop, "description") ?? stringOf(prop, "title"));
    fields.push({ key, type: type.text, required: required.has(key), description: description ?? "" });
  }
  ctx.mod.decls.push(typedDictCode(ctx, name, fields, doc));
  ctx.mod.defined.add(name);
  return fields;
}

/**
 * A TypedDict's source. NotRequired needs Python 3.11, so a dict with both kinds of keys is a
 * subclass with `total=False` (the optional keys) of a base holding the required ones.
 */
function typedDictCode(ctx: PyContext, name: string, fields: readonly PyField[], doc: string[]): string {
  const required = fields.filter((f) => f.required);
  const optional = fields.filter((f) => !f.required);
  const classSyntax = fields.every((f) => isPyIdentifier(f.key) && !f.key.startsWith("__"));
  const docstring = pyDocstring(doc, "    ");
  const body = (list: readonly PyField[]): string =>
    list.map((f) => `${pyLineComment(f.description, "    ")}    ${classSyntax ? f.key : stringLiteral(f.key)}: ${f.type}${classSyntax ? "" : ","}\n`).join("");
  const functional = (typeName: string, list: readonly PyField[], total: boolean): string =>
    `${typeName} = TypedDict(${stringLiteral(typeName)}, {\n${body(list)}}${total ? "" : ", total=False"})\n`;
  const mixed = required.length > 0 && optional.length > 0;
  if (!mixed) {
    const total = optional.length === 0;
    if (!classSyntax) return doc.map((d) => pyLineComment(d, "")).join("") + functional(name, fields, total);
    const text = `class ${name}(TypedDict${total ? "" : ", total=False"}):\n${docstring}${body(fields)}`;
    return fields.length === 0 && docstring === "" ? `${text}    pass\n` : text;
  }
  const base = ctx.mod.names.claim(`_${name}Required`);
  if (classSyntax) return `class ${base}(TypedDict):\n${body(required)}\n\nclass ${name}(${base}, total=False):\n${docstring}${body(optional)}`;
  const rest = ctx.mod.names.claim(`_${name}Optional`);
  return `${functional(base, required, true)}${functional(rest, optional, false)}\n\nclass ${name}(${base}, ${rest}):\n${docstring === "" ? "    pass\n" : docstring}`;
}

/** Subschemas of `allOf` that are object shapes, after following refs. */
function objectMembers(schema: JsonSchema, ctx: PyContext): JsonSchema[] {
  const out: JsonSchema[] = [];
  for (const member of schemaList(schema, "allOf")) {
    const ref = typeof member === "boolean" ? undefined : stringOf(member, "$ref");
    const target = ref === undefined ? member : resolvePointer(ctx.root, ref);
    if (isObject(target) && (isObjectShape(target) || isObject(target.properties))) out.push(target);
  }
  return out;
}

/** Properties of an object plus those of its object-shaped `allOf` members (Python has no intersection). */
function mergedProperties(schema: JsonSchema, ctx: PyContext): [string, SchemaNode][] {
  const merged = new Map<string, SchemaNode>();
  for (const part of [...objectMembers(schema, ctx), schema]) for (const [key, node] of propertiesOf(part)) merged.set(key, node);
  return [...merged];
}

function requiredOfAllOf(schema: JsonSchema, ctx: PyContext): Set<string> {
  return new Set(objectMembers(schema, ctx).flatMap((m) => [...requiredOf(m)]));
}

function hasShape(schema: JsonSchema, ctx: PyContext): boolean {
  return isObject(schema.properties) || objectMembers(schema, ctx).length > 0;
}

function renderObject(schema: JsonSchema, ctx: PyContext, depth: number, hint: string, doc?: string[]): Py {
  if (hasShape(schema, ctx)) {
    // Deeply nested shapes would get ever longer names; past a length the registry's suffixes keep them apart.
    const name = ctx.mod.names.claim(hint.length > MAX_NAME ? hint.slice(0, MAX_NAME) : hint);
    emitTypedDict(ctx, name, schema, depth, doc ?? lines(schema));
    return plain(name);
  }
  const additional = asSchema(schema.additionalProperties);
  const value = additional === undefined || typeof additional === "boolean" ? ANY : render(additional, ctx, depth + 1, `${hint}Value`);
  return plain(`dict[str, ${value.text}]`);
}

function renderArray(schema: JsonSchema, ctx: PyContext, depth: number, hint: string): Py {
  const tuple = Array.isArray(schema.prefixItems) ? schemaList(schema, "prefixItems") : Array.isArray(schema.items) ? schemaList(schema, "items") : undefined;
  if (tuple !== undefined) {
    if (tuple.length === 0) return plain("list[Any]");
    return plain(`tuple[${tuple.map((s, i) => render(s, ctx, depth + 1, `${hint}${i}`).text).join(", ")}]`);
  }
  const items = asSchema(schema.items);
  return plain(`list[${items === undefined ? "Any" : render(items, ctx, depth + 1, `${hint}Item`).text}]`);
}

function renderRef(ref: string, ctx: PyContext, depth: number, hint: string): Py {
  if (ref === "#") return nameRef(ctx, ctx.rootName);
  const def = defNameOf(ref);
  const target = resolvePointer(ctx.root, ref);
  if (def !== undefined && target !== undefined) {
    const known = ctx.defNames.get(def);
    if (known !== undefined) return nameRef(ctx, known);
    const name = ctx.mod.names.claim(`${ctx.prefix}${pascalCase(def)}`);
    ctx.defNames.set(def, name);
    emitNamed(ctx, name, target, depth);
    return nameRef(ctx, name);
  }
  if (target === undefined || ctx.inlineRefs.includes(ref)) return ANY;
  ctx.inlineRefs.push(ref);
  try {
    return render(target, ctx, depth + 1, hint);
  } finally {
    ctx.inlineRefs.pop();
  }
}

function lines(node: SchemaNode): string[] {
  if (typeof node === "boolean") return [];
  const description = stringOf(node, "description") ?? stringOf(node, "title");
  return description === undefined ? [] : [description];
}

const TYPING_KEYWORDS = ["type", "properties", "$ref", "enum", "const", "items", "prefixItems", "additionalProperties", "anyOf", "oneOf", "allOf"];

/** A subschema that only constrains (e.g. `{ required: ["a"] }`) and says nothing about the type. */
function constraintOnly(node: SchemaNode): boolean {
  return typeof node === "boolean" || TYPING_KEYWORDS.every((k) => node[k] === undefined);
}

/** Emits `name` as a TypedDict when the schema is an object shape, else as an alias; returns the TypedDict's fields. */
function emitNamed(ctx: PyContext, name: string, node: SchemaNode, depth: number, doc?: string[]): PyField[] | undefined {
  if (typeof node !== "boolean" && stringOf(node, "$ref") === undefined && isObjectShape(node) && hasShape(node, ctx)) {
    const alternatives = [...schemaList(node, "anyOf"), ...schemaList(node, "oneOf")];
    if (alternatives.every(constraintOnly)) return emitTypedDict(ctx, name, node, depth, doc ?? lines(node));
  }
  const type = render(node, ctx, depth + 1, name);
  ctx.mod.decls.push(`${(doc ?? lines(node)).map((d) => pyLineComment(d, "")).join("")}${name} = ${type.text}\n`);
  ctx.mod.defined.add(name);
  return undefined;
}

function renderByType(type: string, schema: JsonSchema, ctx: PyContext, depth: number, hint: string): Py {
  switch (type) {
    case "string":
      return plain("str");
    case "integer":
      return plain("int");
    case "number":
      return plain("float");
    case "boolean":
      return plain("bool");
    case "null":
      return plain("None");
    case "array":
      return renderArray(schema, ctx, depth, hint);
    case "object":
      return renderObject(schema, ctx, depth, hint);
    default:
      return ANY;
  }
}

function renderOwn(schema: JsonSchema, ctx: PyContext, depth: number, hint: string): Py | undefined {
  if (Object.hasOwn(schema, "const")) {
    const value = literalValue(schema.const);
    return value === undefined ? ANY : plain(`Literal[${value}]`);
  }
  if (Array.isArray(schema.enum)) return union([renderEnum(schema.enum), ...(typesOf(schema).includes("null") ? [plain("None")] : [])]);
  const types = typesOf(schema);
  if (types.length > 0) return union(types.map((t) => renderByType(t, schema, ctx, depth, hint)));
  if (hasShape(schema, ctx) || schema.additionalProperties !== undefined) return renderObject(schema, ctx, depth, hint);
  if (schema.items !== undefined || schema.prefixItems !== undefined) return renderArray(schema, ctx, depth, hint);
  return undefined;
}

/** A Python annotation for `node`; nested object shapes become TypedDicts named after `hint`. */
export function render(node: SchemaNode, ctx: PyContext, depth: number, hint: string): Py {
  if (typeof node === "boolean") return node ? ANY : plain("None");
  if (depth > SCHEMA_LIMITS.maxDepth || ++ctx.nodes > SCHEMA_LIMITS.maxNodes) return ANY;
  const ref = stringOf(node, "$ref");
  if (ref !== undefined) return renderRef(ref, ctx, depth, hint);
  const alternatives = [...schemaList(node, "anyOf"), ...schemaList(node, "oneOf")];
  const choice = alternatives.length > 0 ? union(alternatives.map((m, i) => render(m, ctx, depth + 1, `${hint}${i + 1}`))) : undefined;
  const own = renderOwn(node, ctx, depth, hint);
  if (choice !== undefined && choice.text !== "Any") return choice;
  if (own !== undefined) return own;
  const all = schemaList(node, "allOf");
  if (all.length === 1 && all[0] !== undefined) return render(all[0], ctx, depth + 1, hint);
  return ANY;
}

/** Emits the declarations for one root schema under `rootName`; returns the root TypedDict's fields, if it is one. */
export function emitRootType(mod: PyModuleTypes, root: JsonSchema, rootName: string, prefix: string, doc: string[]): PyField[] | undefined {
  const ctx: PyContext = { mod, root, rootName, prefix, defNames: new Map(), nodes: 0, inlineRefs: [] };
  const fields = emitNamed(ctx, rootName, root, 0, doc);
  // Definitions nobody references are still part of the schema's vocabulary; emit them too.
  for (const [def, node] of definitionsOf(root)) {
    if (ctx.defNames.has(def)) continue;
    const name = mod.names.claim(`${prefix}${pascalCase(def)}`);
    ctx.defNames.set(def, name);
    emitNamed(ctx, name, node, 1);
  }
  return fields;
}
