// Public data types of the catalog: tools, servers, search hits and detail levels.
// Kept apart from the Catalog class so generators and search can share them without cycles.

import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchema } from "./json-schema.js";

/** How much a search hit says: ids only, plus a summary, plus full signatures. */
export type Detail = "name" | "summary" | "full";

export interface CatalogTool {
  /** `${server}.${tool.name}`, with the raw tool name. */
  id: string;
  server: string;
  /** The raw upstream tool name. */
  name: string;
  /** camelCase identifier of the TS wrapper, unique within the server. */
  tsName: string;
  /** snake_case identifier of the Python wrapper, unique within the server. */
  pyName: string;
  title?: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  /** True when `outputSchema` was inferred from a real response rather than declared by the server. */
  outputSchemaInferred: boolean;
  /** When inferred: how many real responses `outputSchema` was merged from. */
  outputSchemaResponses?: number;
  annotations?: Tool["annotations"];
}

export interface CatalogServer {
  name: string;
  /** `sandgate:servers/<name>` */
  tsModule: string;
  /** `servers.<py_ident>` */
  pyModule: string;
  toolCount: number;
  description?: string;
}

export interface SearchHit {
  id: string;
  server: string;
  name: string;
  score: number;
  /** detail ≥ summary: the first sentence(s) of the description, at most 200 characters. */
  summary?: string;
  /** detail = full: TypeScript declarations of the input and output types and the function, with its doc comment. */
  signature?: string;
  /** detail = full: the Python signature line. */
  python?: string;
}

export interface CatalogOptions {
  /** Host directory the tree is written to; only its contents are ever replaced, never the directory itself. */
  dir: string;
  /** Output schemas inferred in an earlier run, by tool id; used while a tool still declares none. */
  inferred?: Record<string, JsonSchema>;
}

export interface SearchOptions {
  detail: Detail;
  /** Hits to return: default 10, at most 50. */
  limit?: number;
  /** Only tools of this server. */
  server?: string;
}
