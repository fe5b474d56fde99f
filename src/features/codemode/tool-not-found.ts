// The message of a tool call whose id names no tool: what is wrong with the id and the closest
// ids, so code with a typo (`memory.readgraph`, `memry.read_graph`, a bare `read_graph`) is fixed in one step.

import type { Catalog, CatalogTool } from "./catalog/index.js";

/** Suggestions a message gives at most. */
const MAX_SIMILAR = 3;

/** `read_graph`, `readGraph` and `read-graph` are one name to a reader. */
function squash(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, "");
}

/** Levenshtein distance, giving up (returning max + 1) once it must exceed `max`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(value);
      best = Math.min(best, value);
    }
    if (best > max) return max + 1;
    previous = current;
  }
  return previous[b.length]!;
}

/** Typos allowed for a name of this length: one per four characters, at least one. */
function allowedTypos(name: string): number {
  return Math.max(1, Math.floor(name.length / 4));
}

/** How far `name` is from the tool's name in any of its spellings; undefined when too far to be a typo. */
function typoDistance(name: string, tool: CatalogTool): number | undefined {
  const wanted = squash(name);
  if (wanted === "") return undefined;
  const max = allowedTypos(wanted);
  const best = Math.min(...[tool.name, tool.tsName, tool.pyName].map((n) => distance(wanted, squash(n), max)));
  return best <= max ? best : undefined;
}

/** Ids of `tools` whose names are a typo away from `name`, closest first. */
function closeByName(tools: CatalogTool[], name: string): string[] {
  return tools
    .map((tool) => ({ id: tool.id, d: typoDistance(name, tool) }))
    .filter((t): t is { id: string; d: number } => t.d !== undefined)
    .sort((a, b) => a.d - b.d)
    .map((t) => t.id);
}

/** The closest ids to `name` among `server`'s tools (or all): typos first, then search hits on its words. */
function similarIds(catalog: Catalog, name: string, server?: string): string[] {
  const ids = closeByName(catalog.tools(server), name);
  if (ids.length < MAX_SIMILAR) {
    try {
      for (const hit of catalog.search(name.replace(/[^A-Za-z0-9]+/g, " "), { detail: "name", limit: MAX_SIMILAR, ...(server ? { server } : {}) })) {
        if (!ids.includes(hit.id)) ids.push(hit.id);
      }
    } catch {
      // a name with no searchable words
    }
  }
  return ids.slice(0, MAX_SIMILAR);
}

function similarText(ids: string[]): string {
  return ids.length ? `; similar: ${ids.join(", ")}` : "";
}

/** Why `ref` resolves to no tool of the catalog, with the closest ids. */
export function toolNotFoundMessage(catalog: Catalog, ref: string): string {
  const servers = catalog.servers().map((s) => s.name);
  const list = servers.join(", ") || "none configured";
  const dot = ref.indexOf(".");
  if (dot <= 0) {
    // A bare tool name: the tools of that name (or close to it) on any server.
    const named = servers.length ? closeByName(catalog.tools(), ref).slice(0, MAX_SIMILAR) : [];
    return `tool \`${ref}\` is not a tool id; ids look like \`server.tool\` (servers: ${list})${similarText(named)}`;
  }
  const server = ref.slice(0, dot);
  const name = ref.slice(dot + 1);
  if (!servers.includes(server)) {
    // A misspelt server: its tool of that name (or close to it) on the servers whose names are a typo away, else anywhere.
    const near = servers.filter((s) => distance(squash(server), squash(s), allowedTypos(squash(server))) <= allowedTypos(squash(server)));
    const ids = near.flatMap((s) => closeByName(catalog.tools(s), name));
    const named = (ids.length ? ids : closeByName(catalog.tools(), name)).slice(0, MAX_SIMILAR);
    return `no upstream server \`${server}\` (servers: ${list})${similarText(named)}`;
  }
  return `server \`${server}\` has no tool \`${name}\`${similarText(similarIds(catalog, name, server))}`;
}
