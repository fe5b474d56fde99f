// Output-schema inference: a JSON Schema guessed from one real tool result, for servers that declare none.
// Objects list their keys as required, arrays merge the schemas of their first elements; depth and width are capped.

import { isObject, type JsonSchema } from "./json-schema.js";

const MAX_DEPTH = 12;
const MAX_ITEMS = 20;
/** Objects with more keys than this are treated as maps (`additionalProperties`). */
const MAX_KEYS = 200;

/** A JSON Schema describing `value` (and values shaped like it). */
export function inferSchema(value: unknown): JsonSchema {
  return infer(value, 0);
}

function infer(value: unknown, depth: number): JsonSchema {
  if (value === null) return { type: "null" };
  if (depth >= MAX_DEPTH) return {};
  switch (typeof value) {
    case "string":
      return { type: "string" };
    case "boolean":
      return { type: "boolean" };
    case "number":
      return { type: Number.isInteger(value) ? "integer" : "number" };
    case "object":
      break;
    case "bigint":
      return { type: "integer" };
    case "undefined":
    case "function":
    case "symbol":
      return {};
  }
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((v) => infer(v, depth + 1));
    const merged = items.reduce<JsonSchema | undefined>((acc, s) => (acc === undefined ? s : mergeSchemas(acc, s)), undefined);
    // An empty array says nothing about its items; leaving `items` out lets a later merge fill it in.
    return merged === undefined ? { type: "array" } : { type: "array", items: merged };
  }
  if (!isObject(value)) return {};
  const entries = Object.entries(value);
  if (entries.length > MAX_KEYS) {
    const merged = entries.slice(0, MAX_ITEMS).map(([, v]) => infer(v, depth + 1)).reduce(mergeSchemas);
    return { type: "object", additionalProperties: merged };
  }
  const properties: Record<string, JsonSchema> = {};
  for (const [key, v] of entries) if (v !== undefined) properties[key] = infer(v, depth + 1);
  return { type: "object", properties, required: Object.keys(properties) };
}

function typeList(schema: JsonSchema): string[] | undefined {
  if (typeof schema.type === "string") return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((t): t is string => typeof t === "string");
  return undefined;
}

/** One schema accepting what either accepts: shared object keys stay required, integer widens to number. */
export function mergeSchemas(a: JsonSchema, b: JsonSchema): JsonSchema {
  if (Array.isArray(a.anyOf)) return mergeIntoUnion(a.anyOf as JsonSchema[], b);
  if (Array.isArray(b.anyOf)) return mergeIntoUnion(b.anyOf as JsonSchema[], a);
  const ta = typeList(a);
  const tb = typeList(b);
  if (ta === undefined || tb === undefined) return {};
  const nullable = ta.includes("null") || tb.includes("null");
  const ra = ta.filter((t) => t !== "null");
  const rb = tb.filter((t) => t !== "null");
  const withNull = (s: JsonSchema): JsonSchema => (nullable ? addNull(s) : s);
  if (ra.length === 0) return withNull(b);
  if (rb.length === 0) return withNull(a);
  const [x, y] = [ra.join(), rb.join()];
  if (x === y && x === "object") return withNull(mergeObjects(a, b));
  if (x === y && x === "array") {
    const items = a.items === undefined ? b.items : b.items === undefined ? a.items : mergeSchemas(asSchema(a.items), asSchema(b.items));
    return withNull(items === undefined ? { type: "array" } : { type: "array", items });
  }
  if (x === y) return withNull({ type: ra[0] });
  if ((x === "integer" && y === "number") || (x === "number" && y === "integer")) return withNull({ type: "number" });
  return { anyOf: [stripNull(a), stripNull(b)].concat(nullable ? [{ type: "null" }] : []) };
}

function asSchema(value: unknown): JsonSchema {
  return isObject(value) ? value : {};
}

function stripNull(schema: JsonSchema): JsonSchema {
  const types = typeList(schema);
  if (types === undefined || !types.includes("null")) return schema;
  const rest = types.filter((t) => t !== "null");
  return { ...schema, type: rest.length === 1 ? rest[0] : rest };
}

function addNull(schema: JsonSchema): JsonSchema {
  const types = typeList(schema);
  if (types === undefined || types.includes("null")) return schema;
  return { ...schema, type: [...types, "null"] };
}

function mergeIntoUnion(members: JsonSchema[], extra: JsonSchema): JsonSchema {
  const extraTypes = typeList(extra)?.join();
  const same = members.findIndex((m) => typeList(m)?.join() === extraTypes);
  if (same === -1) return { anyOf: [...members, extra] };
  return { anyOf: members.map((m, i) => (i === same ? mergeSchemas(m, extra) : m)) };
}

function mergeObjects(a: JsonSchema, b: JsonSchema): JsonSchema {
  const pa = asSchema(a.properties);
  const pb = asSchema(b.properties);
  if (a.additionalProperties !== undefined || b.additionalProperties !== undefined) {
    return { type: a.type, additionalProperties: mergeSchemas(asSchema(a.additionalProperties), asSchema(b.additionalProperties)) };
  }
  const properties: Record<string, JsonSchema> = {};
  for (const key of new Set([...Object.keys(pa), ...Object.keys(pb)])) {
    const sa = pa[key];
    const sb = pb[key];
    properties[key] = isObject(sa) && isObject(sb) ? mergeSchemas(sa, sb) : asSchema(sa ?? sb);
  }
  const ra = new Set(Array.isArray(a.required) ? a.required : []);
  const required = (Array.isArray(b.required) ? b.required : []).filter((k) => ra.has(k));
  return { type: a.type, properties, required };
}
