// Discovery of the upstream catalog: what search_tools and list_servers answer, as structured data.
// This feature's operations (operations.ts: MCP search_tools and list_servers, REST /tools/search and
// /servers, and sandboxed code's searchTools, search_tools, sandgate-tool --search) run on it.

import { z } from "zod";
import { SEARCH_LIMIT_MAX, signedHits, type Catalog, type SearchHit } from "./catalog/index.js";
import type { ToolPolicyConfig } from "../../config/index.js";
import { SandgateError } from "../../errors/index.js";
import { toolPolicyFor } from "../governance/index.js";
import type { UpstreamStatus } from "./upstream/index.js";

/** The limits of a search, the same for the MCP tool and for code: the tool adds its descriptions to these fields. */
export const searchArgsShape = {
  query: z.string().trim().min(1, "the query is empty: give a few words, e.g. \"create issue\"").max(500, "the query is longer than 500 characters"),
  detail: z.enum(["name", "summary", "full"]).optional(),
  limit: z.number().int().min(1).max(SEARCH_LIMIT_MAX).optional(),
  server: z.string().min(1).max(64).optional(),
};
export const searchArgsSchema = z.object(searchArgsShape).strict();
export type SearchArgs = z.infer<typeof searchArgsSchema>;

export type PolicyMark = "deny" | "approve";
export type DiscoveredTool = SearchHit & { policy?: PolicyMark };

export interface DiscoveredServer {
  name: string;
  state: string;
  transport: string;
  tool_count: number;
  ts_module?: string;
  py_module?: string;
  description?: string;
  error?: string;
  /** A failed server: when sandgate tries it again (ISO 8601). */
  next_retry_at?: string;
}

/** What discovery reads: the catalog, the servers' states (secrets masked) and the tool policy. */
export interface DiscoverySource {
  catalog: Catalog;
  status: () => UpstreamStatus[];
  policy: ToolPolicyConfig;
}

/**
 * A search that names no limit gets at most this many hits at detail summary (one line each), each
 * scoring at least SUMMARY_SCORE_CUT of the best: a hit under half the best score matched only on
 * incidental words ("add" of add_issue_comment for "add two numbers"). Name and full get SEARCH_LIMIT_DEFAULT.
 */
export const SUMMARY_LIMIT_DEFAULT = 5;
const SUMMARY_SCORE_CUT = 0.5;

/**
 * Ranked hits with the tool policy's mark on tools it denies or holds for approval. Without a
 * limit, summary gives the few best (SUMMARY_LIMIT_DEFAULT) and full signs only the hits signedHits
 * picks (the tools the query names, or the best few), the rest with their summaries (the MCP
 * tool's text lists them by name); an explicit limit is exact, every hit at the detail asked.
 * Throws INVALID_INPUT (unknown server, no words).
 */
export function discoverTools(source: DiscoverySource, args: SearchArgs): { tools: DiscoveredTool[]; total_tools: number } {
  const { catalog } = source;
  const down = args.server === undefined ? undefined : unavailableServer(source, args.server);
  if (down) throw down;
  const detail = args.detail ?? "summary";
  const limit = args.limit ?? (detail === "summary" ? SUMMARY_LIMIT_DEFAULT : undefined);
  const hits = catalog.search(args.query, {
    detail,
    ...(limit !== undefined ? { limit } : {}),
    ...(args.server !== undefined ? { server: args.server } : {}),
  });
  const best = hits[0]?.score ?? 0;
  const shown = detail === "summary" && args.limit === undefined ? hits.filter((h) => h.score >= best * SUMMARY_SCORE_CUT) : hits;
  const tools: DiscoveredTool[] = shown.map((h) => {
    const tool = catalog.resolve(h.id);
    const { action } = toolPolicyFor(source.policy, h.server, h.name, tool ? [tool.tsName, tool.pyName] : []);
    return { ...h, score: Math.round(h.score * 1000) / 1000, ...(action === "allow" ? {} : { policy: action }) };
  });
  if (detail !== "full" || args.limit !== undefined) return { tools, total_tools: catalog.tools().length };
  const signed = new Set(
    signedHits(
      args.query,
      hits.map((h) => {
        const tool = catalog.resolve(h.id);
        return { id: h.id, name: h.name, score: h.score, ...(tool ? { description: tool.description, ...(tool.title ? { title: tool.title } : {}) } : {}) };
      }),
    ),
  );
  const trimmed = tools.map((t, i) => {
    if (signed.has(i)) return t;
    const { signature: _signature, python: _python, ...rest } = t;
    return rest;
  });
  return { tools: trimmed, total_tools: catalog.tools().length };
}

/** INVALID_INPUT for a search limited to a configured server that is not connected: it is down (and when it is retried), not unknown. */
export function unavailableServer(source: Pick<DiscoverySource, "catalog" | "status">, server: string): SandgateError | undefined {
  const down = source.status().find((s) => s.name === server && s.state !== "ready");
  if (!down || source.catalog.servers().some((s) => s.name === down.name)) return undefined;
  const why = down.error?.split("\n")[0];
  const retry = down.nextRetryAt === undefined ? "" : `; sandgate retries it at ${down.nextRetryAt}`;
  return new SandgateError("INVALID_INPUT", `upstream server \`${down.name}\` is not available (${down.state}${why ? `: ${why}` : ""})${retry}`, {
    data: { server: down.name, state: down.state },
  });
}

/** Every configured server with its state, tool count and module names. */
export function discoverServers(source: DiscoverySource): DiscoveredServer[] {
  const modules = new Map(source.catalog.servers().map((s) => [s.name, s]));
  return source.status().map((s) => {
    const entry = modules.get(s.name);
    return {
      name: s.name,
      state: s.state,
      transport: s.transport,
      tool_count: entry?.toolCount ?? 0,
      ...(entry ? { ts_module: entry.tsModule, py_module: entry.pyModule } : {}),
      ...(entry?.description ? { description: entry.description } : {}),
      ...(s.error ? { error: s.error } : {}),
      ...(s.nextRetryAt ? { next_retry_at: s.nextRetryAt } : {}),
    };
  });
}
