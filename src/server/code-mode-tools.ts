// The discovery tools of code mode: search_tools and list_servers. They disclose the upstream
// catalog a little at a time, so an agent never carries every tool definition in its context.

import { z } from "zod";
import type { SearchHit } from "../catalog/index.js";
import { listServers as discoverServers, searchArgsShape, searchTools as discoverTools } from "../codemode/index.js";
import { upstreamCallExamples } from "../languages/index.js";
import type { ServerContext } from "./context.js";
import { defineTool, type ToolDefinition } from "./tool-definition.js";

const searchToolsInput = z
  .object({
    query: searchArgsShape.query.describe("Words describing what you want to do, e.g. \"create github issue\" or \"read file\""),
    detail: searchArgsShape.detail.describe("name: ids only; summary (default): ids with one-line summaries; full: TypeScript signatures with input and output types"),
    limit: searchArgsShape.limit.describe("Most results to return (default 10)"),
    server: searchArgsShape.server.describe("Search only this upstream server"),
  })
  .strict();

const hitSchema = z.object({
  id: z.string().describe("Tool id for callMCPTool / call_mcp_tool, server.tool"),
  server: z.string(),
  name: z.string(),
  score: z.number(),
  summary: z.string().optional(),
  signature: z.string().optional().describe("TypeScript declaration with input and output types"),
  python: z.string().optional().describe("Python signature of the generated wrapper"),
  policy: z
    .enum(["deny", "approve"])
    .optional()
    .describe("Set when the tool policy refuses calls to this tool (deny) or makes each wait for a person's approval (approve)"),
});
export const searchToolsOutput = z.object({ tools: z.array(hitSchema), total_tools: z.number().int() });

const listServersInput = z.object({}).strict();
export const listServersOutput = z.object({
  servers: z.array(
    z.object({
      name: z.string(),
      state: z.string().describe("connecting, ready, failed, restarting, disabled or closed"),
      transport: z.string(),
      tool_count: z.number().int(),
      ts_module: z.string().optional().describe("Module to import in JavaScript/TypeScript, e.g. sandgate:servers/github"),
      py_module: z.string().optional().describe("Module to import in Python, e.g. servers.github"),
      description: z.string().optional(),
      error: z.string().optional().describe("Why the server is not ready"),
      next_retry_at: z.string().optional().describe("When a failed server is tried again"),
    }),
  ),
});

/** How sandboxed code calls these tools, in each language (from the language specs). */
const IN_CODE =
  `In code: ${upstreamCallExamples().map(({ titles, example }) => `\`${example.call}\` (${titles})`).join(", ")}, ` +
  `or the generated modules ${upstreamCallExamples().flatMap(({ example }) => (example.module ? [`\`${example.module}\``] : [])).join(" and ")}.`;

const POLICY_NOTE = { deny: " [denied by the tool policy]", approve: " [each call waits for a person's approval]" } as const;

function renderHits(hits: Array<SearchHit & { policy?: keyof typeof POLICY_NOTE }>, detail: string): string {
  const note = (h: { policy?: keyof typeof POLICY_NOTE }): string => (h.policy ? POLICY_NOTE[h.policy] : "");
  if (detail === "name") return hits.map((h) => `${h.id}${note(h)}`).join("\n");
  if (detail === "summary") return hits.map((h) => `${h.id}${note(h)}${h.summary ? ` — ${h.summary}` : ""}`).join("\n");
  return hits.map((h) => [`// ${h.id}${note(h)}`, h.signature ?? "", h.python ? `# Python: ${h.python}` : ""].filter(Boolean).join("\n")).join("\n\n");
}

export function createCodeModeTools(ctx: ServerContext): ToolDefinition[] {
  const { codeMode } = ctx;

  const searchTools = defineTool({
    name: "search_tools",
    scope: "execute",
    title: "Search upstream tools",
    description:
      "Find tools of the connected MCP servers that code run by execute_code can call. Ranked by relevance to the query. " +
      "Start with detail \"summary\"; ask for detail \"full\" on the few tools you will use to get their TypeScript signatures. " +
      IN_CODE,
    input: searchToolsInput,
    output: searchToolsOutput,
    annotations: { title: "Search upstream tools", readOnlyHint: true, openWorldHint: false },
    async run(args) {
      const detail = args.detail ?? "summary";
      const { tools, total_tools: total } = discoverTools(codeMode.discoverySource(), args);
      const text =
        total === 0
          ? "No upstream tools are available: no MCP server is configured (mcpServers) or none is connected. list_servers shows their state."
          : tools.length === 0
            ? `No tool matches "${args.query}" among ${total} tools. Try other words, or list_servers.`
            : renderHits(tools, detail);
      return { structured: { tools, total_tools: total }, text };
    },
  });

  const listServers = defineTool({
    name: "list_servers",
    scope: "execute",
    title: "List upstream servers",
    description: "List the upstream MCP servers whose tools code can call: state, number of tools and the module names to import. Use search_tools to find tools.",
    input: listServersInput,
    output: listServersOutput,
    annotations: { title: "List upstream servers", readOnlyHint: true, openWorldHint: false },
    async run() {
      const servers = discoverServers(codeMode.discoverySource());
      const text =
        servers.length === 0
          ? "No upstream MCP servers are configured (mcpServers in sandgate.json)."
          : servers
              .map((s) => `${s.name}: ${s.state}, ${s.tool_count} tools${s.ts_module ? ` (${s.ts_module}, ${s.py_module})` : ""}${s.error ? ` — ${s.error}` : ""}`)
              .join("\n");
      return { structured: { servers }, text };
    },
  });

  return [searchTools, listServers];
}
