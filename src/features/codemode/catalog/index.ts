// Public surface of the catalog: upstream MCP tools by server, ranked search and the generated wrapper tree.
// Everything here is host-side; the tree it writes is what sandboxes mount read-only.

export { Catalog, inferredInBackground, SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, toolRefSplits } from "./catalog.js";
export { signedHits, type RankedHit } from "./search.js";
export { tokenize } from "./tokenize.js";
export type { CatalogOptions, CatalogServer, CatalogTool, Detail, SearchHit, SearchOptions } from "./types.js";
export type { JsonSchema } from "./json-schema.js";
export { inferSchema } from "./infer-schema.js";
export { camelCase, snakeCase, pyModuleName } from "./naming.js";
