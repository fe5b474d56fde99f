// The generated `servers/` tree as MCP resources: one resource per file, readable by URI, so
// an agent can open a server's index.ts or one tool's types without searching.

import type { Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import type { Catalog } from "../features/codemode/index.js";

export const TREE_PREFIX = "sandgate://tools/";

export const TREE_TEMPLATE: ResourceTemplate = {
  uriTemplate: `${TREE_PREFIX}{+path}`,
  name: "tool-tree",
  title: "Generated tool wrappers",
  description: "TypeScript and Python wrappers of the upstream tools, e.g. sandgate://tools/servers/<server>/index.ts; the same files sandboxes see under /sandgate/tools",
};

function mimeTypeOf(path: string): string {
  if (path.endsWith(".ts")) return "text/x-typescript";
  if (path.endsWith(".py")) return "text/x-python";
  if (path.endsWith(".json")) return "application/json";
  return "text/plain";
}

export function treeResources(catalog: Catalog): Resource[] {
  return catalog.tree().map((path) => ({ uri: `${TREE_PREFIX}${path}`, name: path, mimeType: mimeTypeOf(path) }));
}

/** The file behind a tree URI, or undefined when the URI names none. */
export function readTreeResource(catalog: Catalog, uri: string): { uri: string; mimeType: string; text: string } | undefined {
  if (!uri.startsWith(TREE_PREFIX)) return undefined;
  const path = decodeURIComponent(uri.slice(TREE_PREFIX.length));
  const text = catalog.readTreeFile(path);
  return text === undefined ? undefined : { uri, mimeType: mimeTypeOf(path), text };
}
