// JSON Schema from the zod schemas, for MCP tool listings and the OpenAPI document.

import type { z } from "zod";
import { zodToJsonSchema } from "zod-to-json-schema";

/** A self-contained JSON Schema object (no $ref, no $schema) for `schema`. */
export function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = zodToJsonSchema(schema, { $refStrategy: "none", target: "jsonSchema7" }) as Record<string, unknown>;
  return rest;
}
