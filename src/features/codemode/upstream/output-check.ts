// The check of a tool result's structuredContent against the upstream's outputSchema: a small subset of JSON
// Schema (type, required, properties, items) walked within a fixed budget, with nothing compiled or cached.

import type { jsonSchemaValidator, JsonSchemaValidator, JsonSchemaType } from "@modelcontextprotocol/sdk/validation";

/**
 * Upstream schemas are hostile input. The SDK's default (Ajv) compiled every output schema of every listing
 * on the event loop (14 s for 990 schemas) and kept each compiled validator (100 MB a listing), and ran
 * `pattern` with the `u` flag, which backtracks exponentially (one result held the loop for a minute).
 * So: no compilation, no cache, no `pattern` or `format`; a walk of at most this many (schema, value)
 * pairs and this deep, past which the value is accepted unchecked.
 */
const MAX_STEPS = 10_000;
const MAX_DEPTH = 32;
/** Problems named in one error message. */
const MAX_PROBLEMS = 3;

type Schema = Record<string, unknown>;

interface Walk {
  steps: number;
  problems: string[];
}

/** The provider the upstream MCP client validates results with (its `jsonSchemaValidator` option). */
export const boundedOutputCheck: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    // Keeps only the reference: getting a validator costs nothing, so listing 1,000 tools costs no more.
    return (input: unknown) => {
      const problems = outputProblems(schema, input);
      return problems.length === 0
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: problems.join("; ") };
    };
  },
};

/** What in `value` contradicts `schema`'s checked subset; [] when nothing does (or the budget ran out). */
export function outputProblems(schema: Schema, value: unknown): string[] {
  const walk: Walk = { steps: 0, problems: [] };
  check(schema, value, "", 0, walk);
  return walk.problems;
}

function check(schema: unknown, value: unknown, at: string, depth: number, walk: Walk): void {
  if (!isSchema(schema) || depth > MAX_DEPTH || walk.problems.length >= MAX_PROBLEMS || ++walk.steps > MAX_STEPS) return;
  // A reference or a combinator may widen what the rest allows; the subset judges only plain schemas.
  if (["$ref", "$dynamicRef", "anyOf", "oneOf", "if", "not"].some((k) => k in schema)) return;
  const types = typeList(schema.type);
  if (types !== undefined && !types.some((t) => hasType(value, t))) {
    walk.problems.push(`${at || "the result"} must be ${types.join(" or ")}`);
    return;
  }
  if (isRecord(value)) {
    // The schema's own lists count against the budget too: a `required` of a million names is hostile input.
    if (Array.isArray(schema.required)) {
      for (const key of schema.required) {
        if (walk.problems.length >= MAX_PROBLEMS || ++walk.steps > MAX_STEPS) return;
        if (typeof key === "string" && !Object.hasOwn(value, key)) walk.problems.push(`${at || "the result"} must have property \`${key}\``);
      }
    }
    if (isSchema(schema.properties)) {
      for (const key in schema.properties) {
        if (walk.steps > MAX_STEPS) return;
        if (Object.hasOwn(schema.properties, key) && Object.hasOwn(value, key)) check(schema.properties[key], value[key], `${at}/${key}`, depth + 1, walk);
        else walk.steps++;
      }
    }
  } else if (Array.isArray(value) && isSchema(schema.items)) {
    for (let i = 0; i < value.length && walk.steps <= MAX_STEPS; i++) check(schema.items, value[i], `${at}/${i}`, depth + 1, walk);
  }
}

function typeList(type: unknown): string[] | undefined {
  if (typeof type === "string") return [type];
  if (Array.isArray(type) && type.every((t) => typeof t === "string")) return type;
  return undefined;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case "object":
      return isRecord(value);
    case "array":
      return Array.isArray(value);
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "integer":
      return Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    default:
      return true; // an unknown type name is the server's mistake, not the result's
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isSchema(value: unknown): value is Schema {
  return isRecord(value);
}
