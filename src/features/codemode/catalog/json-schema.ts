// JSON Schema access for code generation: the schema type, $ref resolution and keyword readers.
// Schemas come from upstream servers, so every reader tolerates junk and never throws.

/** A JSON Schema object as upstream servers send it (keywords are read defensively). */
export type JsonSchema = Record<string, unknown>;

/** A subschema: an object, or the boolean schemas `true` (anything) and `false` (nothing). */
export type SchemaNode = JsonSchema | boolean;

/** Limits that keep hostile schemas from producing endless or enormous output. */
export const SCHEMA_LIMITS = {
  /** Nesting depth after which a subschema is rendered as "anything". */
  maxDepth: 16,
  /** Enum members rendered as literals; larger enums fall back to their base type. */
  maxEnum: 100,
  /** Subschemas rendered per type before the rest collapse to "anything". */
  maxNodes: 4000,
  /** Characters of one description kept in a comment. */
  maxDescription: 4000,
} as const;

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The subschema at `value` when it is one, else undefined. */
export function asSchema(value: unknown): SchemaNode | undefined {
  if (typeof value === "boolean") return value;
  return isObject(value) ? value : undefined;
}

export function stringOf(schema: JsonSchema, key: string): string | undefined {
  const value = schema[key];
  return typeof value === "string" ? value : undefined;
}

/** The `type` keyword as a list (`"string"` → ["string"], absent → []). */
export function typesOf(schema: JsonSchema): string[] {
  const value = schema.type;
  const list = typeof value === "string" ? [value] : Array.isArray(value) ? value.filter((t): t is string => typeof t === "string") : [];
  if (schema.nullable === true && !list.includes("null") && list.length > 0) list.push("null");
  return list;
}

export function propertiesOf(schema: JsonSchema): [string, SchemaNode][] {
  const props = schema.properties;
  if (!isObject(props)) return [];
  const out: [string, SchemaNode][] = [];
  for (const [key, value] of Object.entries(props)) {
    const node = asSchema(value);
    if (node !== undefined) out.push([key, node]);
  }
  return out;
}

export function requiredOf(schema: JsonSchema): Set<string> {
  const value = schema.required;
  return new Set(Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []);
}

/** Subschemas of a combinator keyword (`anyOf`, `oneOf`, `allOf`, `prefixItems`). */
export function schemaList(schema: JsonSchema, key: string): SchemaNode[] {
  const value = schema[key];
  if (!Array.isArray(value)) return [];
  return value.map(asSchema).filter((s): s is SchemaNode => s !== undefined);
}

/** True when the schema describes an object shape (explicitly or by its keywords). */
export function isObjectShape(schema: JsonSchema): boolean {
  const types = typesOf(schema);
  if (types.length > 0) return types.length === 1 && types[0] === "object";
  return isObject(schema.properties) || schema.additionalProperties !== undefined;
}

/** A local `$ref` split into its JSON-pointer segments, or undefined for remote refs. */
function refPointer(ref: string): string[] | undefined {
  if (ref === "#") return [];
  if (!ref.startsWith("#/")) return undefined;
  return ref
    .slice(2)
    .split("/")
    .map((s) => {
      let seg = s.replace(/~1/g, "/").replace(/~0/g, "~");
      try {
        seg = decodeURIComponent(seg);
      } catch {
        // A malformed escape stays literal.
      }
      return seg;
    });
}

/** The definition name when `ref` points into `$defs` or `definitions` (one level deep). */
export function defNameOf(ref: string): string | undefined {
  const pointer = refPointer(ref);
  if (pointer?.length !== 2) return undefined;
  return pointer[0] === "$defs" || pointer[0] === "definitions" ? pointer[1] : undefined;
}

/** Follows a local `$ref` from the root schema; undefined when it goes nowhere. */
export function resolvePointer(root: JsonSchema, ref: string): SchemaNode | undefined {
  const pointer = refPointer(ref);
  if (pointer === undefined) return undefined;
  let node: unknown = root;
  for (const seg of pointer) {
    if (Array.isArray(node)) node = node[Number(seg)];
    else if (isObject(node) && Object.hasOwn(node, seg)) node = node[seg];
    else return undefined;
  }
  return asSchema(node);
}

/** Named definitions of a root schema (`$defs` wins over `definitions` on a clash). */
export function definitionsOf(root: JsonSchema): [string, SchemaNode][] {
  const out = new Map<string, SchemaNode>();
  for (const key of ["definitions", "$defs"]) {
    const defs = root[key];
    if (!isObject(defs)) continue;
    for (const [name, value] of Object.entries(defs)) {
      const node = asSchema(value);
      if (node !== undefined) out.set(name, node);
    }
  }
  return [...out];
}

/** Collapses whitespace and strips control characters from upstream text. */
export function cleanText(text: string, max: number = SCHEMA_LIMITS.maxDescription): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = text.replace(/\r\n?/g, "\n").replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "").trim();
  return cleaned.length > max ? `${cleaned.slice(0, max - 1)}…` : cleaned;
}
