// Output-schema inference: a JSON Schema guessed from one real tool result, for servers that declare none.
// Only types and plain identifier keys are learned, never values: one caller's data is shown to every agent.

import { isObject, type JsonSchema } from "./json-schema.js";

const MAX_DEPTH = 8;
const MAX_ITEMS = 20;
/** Objects with more keys than this are treated as maps (`additionalProperties`). */
const MAX_KEYS = 64;
/** Members of an `anyOf` before the union collapses to "any value". */
const MAX_UNION = 6;
/**
 * Keys kept as named properties. Anything else (sentences, markup, quotes, very long keys) makes the
 * object a map: a key is data, and data must not become text the agent reads as part of the API.
 */
const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]{0,63}$/;
const TYPES = new Set(["string", "integer", "number", "boolean", "null", "object", "array"]);

/**
 * Values looked at per inference. With 20 items a level and 8 levels a result could otherwise cost 20^8 steps;
 * past the budget a value is typed as "any value", so a huge or deep result costs the same as a moderate one.
 */
const MAX_NODES = 2000;

/** A JSON Schema describing `value` (and values shaped like it): types and plain keys only. */
export function inferSchema(value: unknown): JsonSchema {
  return sanitizeInferred(infer(value, 0, { left: MAX_NODES }));
}

/** The schema of several responses: `previous` widened by `value` (keys missing from one become optional). */
export function mergeInferred(previous: JsonSchema, value: unknown): JsonSchema {
  return sanitizeInferred(mergeSchemas(previous, inferSchema(value)));
}

/**
 * An inferred schema reduced to what inference may produce: `type`, plain-key `properties` with
 * `required`, `items`, `additionalProperties`, a short `anyOf`; within the depth and width caps.
 * Applied to every schema read back from disk, which may come from an older sandgate or be edited.
 */
export function sanitizeInferred(schema: unknown, depth = 0): JsonSchema {
  if (!isObject(schema) || depth > MAX_DEPTH) return {};
  if (Array.isArray(schema.anyOf)) {
    const members = schema.anyOf.map((m) => sanitizeInferred(m, depth + 1));
    if (members.length < 2 || members.length > MAX_UNION || members.some((m) => Object.keys(m).length === 0)) return {};
    return { anyOf: members };
  }
  const type = typeof schema.type === "string" ? [schema.type] : Array.isArray(schema.type) ? schema.type : [];
  const types = type.filter((t): t is string => typeof t === "string" && TYPES.has(t));
  if (types.length === 0 || types.length !== type.length || new Set(types).size !== types.length) return {};
  const out: JsonSchema = { type: types.length === 1 ? types[0] : types };
  if (types.includes("array") && schema.items !== undefined) {
    const items = sanitizeInferred(schema.items, depth + 1);
    if (Object.keys(items).length > 0) out.items = items;
  }
  if (types.includes("object")) {
    const properties = isObject(schema.properties) ? Object.entries(schema.properties) : [];
    if (schema.additionalProperties !== undefined || properties.length > MAX_KEYS || properties.some(([key]) => !PLAIN_KEY.test(key))) {
      const values = isObject(schema.additionalProperties) ? [schema.additionalProperties] : properties.map(([, v]) => v);
      const merged = values.slice(0, MAX_ITEMS).map((v) => sanitizeInferred(v, depth + 1)).reduce<JsonSchema | undefined>((a, b) => (a === undefined ? b : mergeSchemas(a, b)), undefined);
      out.additionalProperties = merged === undefined ? {} : sanitizeInferred(merged, depth + 1);
    } else if (properties.length > 0 || isObject(schema.properties)) {
      const keys = new Set(properties.map(([key]) => key));
      out.properties = Object.fromEntries(properties.map(([key, v]) => [key, sanitizeInferred(v, depth + 1)]));
      out.required = (Array.isArray(schema.required) ? schema.required : []).filter((k): k is string => typeof k === "string" && keys.has(k));
    }
  }
  return out;
}

function infer(value: unknown, depth: number, budget: { left: number }): JsonSchema {
  if (value === null) return { type: "null" };
  if (depth >= MAX_DEPTH || budget.left <= 0) return {};
  budget.left -= 1;
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
    const items = value.slice(0, MAX_ITEMS).map((v) => infer(v, depth + 1, budget));
    const merged = items.reduce<JsonSchema | undefined>((acc, s) => (acc === undefined ? s : mergeSchemas(acc, s)), undefined);
    // An empty array says nothing about its items; leaving `items` out lets a later merge fill it in.
    return merged === undefined ? { type: "array" } : { type: "array", items: merged };
  }
  if (!isObject(value)) return {};
  const keys = Object.keys(value);
  if (keys.length > MAX_KEYS) {
    const merged = keys.slice(0, MAX_ITEMS).map((key) => infer(value[key], depth + 1, budget)).reduce(mergeSchemas);
    return { type: "object", additionalProperties: merged };
  }
  const properties: Record<string, JsonSchema> = {};
  for (const key of keys) if (value[key] !== undefined) properties[key] = infer(value[key], depth + 1, budget);
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
    // Own keys only: `constructor` or `toString` missing from one side must not read Object.prototype's.
    const sa = Object.hasOwn(pa, key) ? pa[key] : undefined;
    const sb = Object.hasOwn(pb, key) ? pb[key] : undefined;
    properties[key] = isObject(sa) && isObject(sb) ? mergeSchemas(sa, sb) : asSchema(sa ?? sb);
  }
  const ra = new Set(Array.isArray(a.required) ? a.required : []);
  const required = (Array.isArray(b.required) ? b.required : []).filter((k) => ra.has(k));
  return { type: a.type, properties, required };
}
