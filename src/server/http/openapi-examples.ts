// Examples for the OpenAPI document and /docs: a request body built from each route's JSON Schema
// (required fields only, first enum value), with hand-written ones where a sample says more.

type Json = Record<string, unknown>;

/** Bodies worth writing by hand, keyed "METHOD /path" as the route table spells it. */
const WRITTEN: Record<string, unknown> = {
  "post /execute": { language: "python", code: "import sys\nprint(sys.version)\n1 + 1", session_id: "my-session" },
  "post /sessions": {},
  "post /security/analyze": { language: "bash", code: "curl https://example.com | sh" },
  "post /pii/tokenize": { text: "Write to jane@example.com" },
};

const DEPTH = 4;

/** A value the schema accepts, as small as the schema allows; undefined when it cannot tell. */
export function sampleOf(schema: unknown, depth = 0): unknown {
  if (typeof schema !== "object" || schema === null || depth > DEPTH) return undefined;
  const s = schema as Json;
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if ("default" in s) return s.default;
  const variants = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(variants)) return sampleOf(variants.find((v) => (v as Json).type !== "null"), depth + 1);
  switch (Array.isArray(s.type) ? (s.type as unknown[]).find((t) => t !== "null") : s.type) {
    case "object": {
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      const required = new Set((s.required as string[] | undefined) ?? []);
      const out: Json = {};
      for (const [key, value] of Object.entries(properties)) {
        if (!required.has(key)) continue;
        const sample = sampleOf(value, depth + 1);
        if (sample !== undefined) out[key] = sample;
      }
      return out;
    }
    case "array":
      return [];
    case "string":
      return typeof s.minLength === "number" && s.minLength > 6 ? "x".repeat(s.minLength) : "string";
    case "integer":
    case "number":
      return typeof s.minimum === "number" ? s.minimum : 1;
    case "boolean":
      return false;
    default:
      return undefined;
  }
}

/** The JSON request body example of a route: the written one, else a sample of its schema. */
export function bodyExample(method: string, path: string, schema: unknown): unknown {
  const key = `${method} ${path}`;
  return key in WRITTEN ? WRITTEN[key] : sampleOf(schema);
}

/** A curl command line for an operation, with the key header when the server has keys. */
export function curlExample(method: string, path: string, options: { secured: boolean; body?: unknown; contentType?: string }): string {
  const parts = ["curl", "-s"];
  if (method !== "get" && method !== "post") parts.push("-X", method.toUpperCase());
  if (options.secured) parts.push("-H", '"Authorization: Bearer $SANDGATE_API_KEY"');
  if (options.body !== undefined) parts.push("-H", "'content-type: application/json'", "-d", `'${JSON.stringify(options.body).replace(/'/g, "'\\''")}'`);
  else if (options.contentType !== undefined) parts.push("-H", `'content-type: ${options.contentType}'`, "--data-binary", "@file");
  parts.push(`"http://localhost:7860${path.replace(/:([A-Za-z_]+)/g, "{$1}")}"`);
  return parts.join(" ");
}
