// JSON Schema → TypeScript type expressions: refs, enums, unions, intersections, tuples, records, doc comments.
// Rendering is bounded (depth, node budget, enum size) and turns reference cycles into type names or `unknown`.

import {
  SCHEMA_LIMITS,
  asSchema,
  defNameOf,
  isObject,
  propertiesOf,
  requiredOf,
  resolvePointer,
  schemaList,
  stringOf,
  typesOf,
  type JsonSchema,
  type SchemaNode,
} from "./json-schema.js";
import { tsDocComment, stringLiteral } from "./doc-text.js";
import { isTsIdentifier } from "./naming.js";

/** Naming and bookkeeping for one root schema (a tool's input or output). */
export interface TsTypeContext {
  root: JsonSchema;
  /** Name used for `$ref: "#"` (the root's own declared name). */
  rootName: string;
  /** Definition name (raw, from `$defs`/`definitions`) → declared TS type name. */
  defNames: ReadonlyMap<string, string>;
  /** Rendered subschemas so far; past the budget everything is `unknown`. */
  nodes: number;
  /** Pointers being expanded inline right now (for refs outside `$defs`). */
  inlineRefs: string[];
  /** Type names referenced outside any object or array while rendering the current declaration. */
  directRefs: Set<string>;
}

// Operator precedence of a rendered type, to know when to add parentheses.
const UNION = 0;
const INTERSECTION = 1;
const PRIMARY = 2;

interface Rendered {
  text: string;
  prec: number;
}

const UNKNOWN: Rendered = { text: "unknown", prec: PRIMARY };
const NEVER: Rendered = { text: "never", prec: PRIMARY };

function primary(text: string): Rendered {
  return { text, prec: PRIMARY };
}

function paren(r: Rendered, min: number): string {
  return r.prec < min ? `(${r.text})` : r.text;
}

export function newTsContext(root: JsonSchema, rootName: string, defNames: ReadonlyMap<string, string>): TsTypeContext {
  return { root, rootName, defNames, nodes: 0, inlineRefs: [], directRefs: new Set() };
}

function union(members: Rendered[]): Rendered {
  const seen = new Set<string>();
  const out: Rendered[] = [];
  for (const m of members) {
    if (m.text === "unknown") return UNKNOWN;
    if (m.text === "never" || seen.has(m.text)) continue;
    seen.add(m.text);
    out.push(m);
  }
  if (out.length === 0) return NEVER;
  if (out.length === 1) return out[0] ?? NEVER;
  return { text: out.map((m) => paren(m, INTERSECTION)).join(" | "), prec: UNION };
}

function intersection(members: Rendered[]): Rendered {
  const out = members.filter((m, i) => m.text !== "unknown" && members.findIndex((o) => o.text === m.text) === i);
  if (out.some((m) => m.text === "never")) return NEVER;
  if (out.length === 0) return UNKNOWN;
  if (out.length === 1) return out[0] ?? UNKNOWN;
  return { text: out.map((m) => paren(m, PRIMARY)).join(" & "), prec: INTERSECTION };
}

/** A literal type for an enum/const value, or undefined for values TS has no literal for. */
function literal(value: unknown): string | undefined {
  if (typeof value === "string") return stringLiteral(value);
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value === "boolean" || value === null) return String(value);
  return undefined;
}

function baseOfValues(values: unknown[]): Rendered {
  return union(
    values.map((v) => {
      if (v === null) return primary("null");
      if (Array.isArray(v)) return primary("unknown[]");
      const t = typeof v;
      return t === "string" || t === "number" || t === "boolean" ? primary(t) : UNKNOWN;
    }),
  );
}

function renderEnum(values: unknown[]): Rendered {
  const literals = values.map(literal);
  if (values.length > SCHEMA_LIMITS.maxEnum || literals.some((l) => l === undefined)) return baseOfValues(values);
  return union(literals.map((l) => primary(l ?? "unknown")));
}

/** Doc comment lines for a property or declaration: description, default, deprecation. */
export function schemaDocLines(node: SchemaNode): string[] {
  if (typeof node === "boolean") return [];
  const lines: string[] = [];
  const description = stringOf(node, "description") ?? stringOf(node, "title");
  if (description !== undefined) lines.push(description);
  if (node.default !== undefined) {
    const json = JSON.stringify(node.default);
    if (json !== undefined) lines.push(`@default ${json.length > 200 ? `${json.slice(0, 199)}…` : json}`);
  }
  if (node.deprecated === true) lines.push("@deprecated");
  return lines;
}

function propertyKey(key: string): string {
  return isTsIdentifier(key) ? key : stringLiteral(key);
}

/** Members of an object type (one per line at `indent`), shared by inline types and interfaces. */
export function renderMembers(schema: JsonSchema, ctx: TsTypeContext, depth: number, indent: string): { lines: string; extra?: Rendered } {
  const required = requiredOf(schema);
  let lines = "";
  for (const [key, prop] of propertiesOf(schema)) {
    const type = render(prop, ctx, depth + 1, indent, true);
    lines += tsDocComment(schemaDocLines(prop), indent);
    lines += `${indent}${propertyKey(key)}${required.has(key) ? "" : "?"}: ${type.text};\n`;
  }
  const hasProps = isObject(schema.properties);
  const additional = schema.additionalProperties;
  const open = additional === true || (additional === undefined && !hasProps) || isObject(schema.patternProperties);
  if (isObject(additional)) {
    const valueType = render(additional, ctx, depth + 1, indent, true);
    if (lines === "") lines = `${indent}[key: string]: ${valueType.text};\n`;
    else return { lines, extra: primary(`Record<string, ${valueType.text}>`) };
  } else if (open) {
    lines += `${indent}[key: string]: unknown;\n`;
  }
  return { lines };
}

function renderObject(schema: JsonSchema, ctx: TsTypeContext, depth: number, indent: string): Rendered {
  const inner = `${indent}  `;
  const { lines, extra } = renderMembers(schema, ctx, depth, inner);
  const body = lines === "" ? primary(isObject(schema.properties) ? "{}" : "Record<string, never>") : primary(`{\n${lines}${indent}}`);
  return extra === undefined ? body : intersection([body, extra]);
}

function renderArray(schema: JsonSchema, ctx: TsTypeContext, depth: number, indent: string): Rendered {
  const tuple = Array.isArray(schema.prefixItems) ? schemaList(schema, "prefixItems") : Array.isArray(schema.items) ? schemaList(schema, "items") : undefined;
  if (tuple !== undefined) {
    const minItems = typeof schema.minItems === "number" ? schema.minItems : tuple.length;
    const rest = asSchema(Array.isArray(schema.prefixItems) ? schema.items : schema.additionalItems);
    const elements = tuple.map((s, i) => `${render(s, ctx, depth + 1, indent, true).text}${i >= minItems ? "?" : ""}`);
    if (rest !== undefined && rest !== false) elements.push(`...${paren(render(rest, ctx, depth + 1, indent, true), PRIMARY)}[]`);
    return primary(`[${elements.join(", ")}]`);
  }
  const items = asSchema(schema.items);
  const item = items === undefined ? UNKNOWN : render(items, ctx, depth + 1, indent, true);
  return primary(`${paren(item, PRIMARY)}[]`);
}

function renderRef(ref: string, ctx: TsTypeContext, depth: number, indent: string, guarded: boolean): Rendered {
  const name = ref === "#" ? ctx.rootName : (() => {
    const def = defNameOf(ref);
    return def === undefined ? undefined : ctx.defNames.get(def);
  })();
  if (name !== undefined) {
    if (!guarded) ctx.directRefs.add(name);
    return primary(name);
  }
  // Refs into other places of the document are expanded inline; a cycle among them stops at `unknown`.
  if (ctx.inlineRefs.includes(ref)) return UNKNOWN;
  const target = resolvePointer(ctx.root, ref);
  if (target === undefined) return UNKNOWN;
  ctx.inlineRefs.push(ref);
  try {
    return render(target, ctx, depth + 1, indent, guarded);
  } finally {
    ctx.inlineRefs.pop();
  }
}

function renderByType(type: string, schema: JsonSchema, ctx: TsTypeContext, depth: number, indent: string): Rendered {
  switch (type) {
    case "string":
      return primary("string");
    case "number":
    case "integer":
      return primary("number");
    case "boolean":
      return primary("boolean");
    case "null":
      return primary("null");
    case "array":
      return renderArray(schema, ctx, depth, indent);
    case "object":
      return renderObject(schema, ctx, depth, indent);
    default:
      return UNKNOWN;
  }
}

/** The types a schema's own keywords describe (ignoring combinators), or undefined when it says nothing. */
function renderOwn(schema: JsonSchema, ctx: TsTypeContext, depth: number, indent: string): Rendered | undefined {
  if (Object.hasOwn(schema, "const")) return primary(literal(schema.const) ?? "unknown");
  if (Array.isArray(schema.enum)) {
    const rendered = renderEnum(schema.enum);
    return typesOf(schema).includes("null") ? union([rendered, primary("null")]) : rendered;
  }
  const types = typesOf(schema);
  if (types.length > 0) return union(types.map((t) => renderByType(t, schema, ctx, depth, indent)));
  if (isObject(schema.properties) || schema.additionalProperties !== undefined) return renderObject(schema, ctx, depth, indent);
  if (schema.items !== undefined || schema.prefixItems !== undefined) return renderArray(schema, ctx, depth, indent);
  return undefined;
}

/**
 * Renders `node` as a TS type expression. `guarded` is true once inside an object member or array
 * element, where a self-reference is legal TypeScript; unguarded references are recorded in `directRefs`.
 */
export function render(node: SchemaNode, ctx: TsTypeContext, depth: number, indent: string, guarded: boolean): Rendered {
  if (node === true) return UNKNOWN;
  if (node === false) return NEVER;
  if (depth > SCHEMA_LIMITS.maxDepth || ++ctx.nodes > SCHEMA_LIMITS.maxNodes) return UNKNOWN;
  const ref = stringOf(node, "$ref");
  if (ref !== undefined) {
    const target = renderRef(ref, ctx, depth, indent, guarded);
    return node.nullable === true ? union([target, primary("null")]) : target;
  }
  const parts: Rendered[] = [];
  const own = renderOwn(node, ctx, depth, indent);
  if (own !== undefined) parts.push(own);
  for (const key of ["anyOf", "oneOf"]) {
    const members = schemaList(node, key);
    if (members.length > 0) parts.push(union(members.map((m) => render(m, ctx, depth + 1, indent, guarded))));
  }
  for (const member of schemaList(node, "allOf")) parts.push(render(member, ctx, depth + 1, indent, guarded));
  return parts.length === 0 ? UNKNOWN : intersection(parts);
}

/** A TS type expression for `node`, for use inside generated declarations. */
export function tsTypeOf(node: SchemaNode, ctx: TsTypeContext, indent = ""): string {
  return render(node, ctx, 0, indent, false).text;
}
