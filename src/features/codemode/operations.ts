// The discovery tools of code mode: search_tools and list_servers. They disclose the upstream
// catalog a little at a time, so an agent never carries every tool definition in its context.

import { z } from "zod";
import type { SearchHit } from "../../catalog/index.js";
import { listServers as discoverServers, searchArgsShape, searchTools as discoverTools } from "../../codemode/index.js";
import { upstreamCallExamples } from "../../languages/index.js";
import type { ServerContext } from "../../server/context.js";
import { compactSignatures } from "./signature-text.js";
import { defineTool, type ToolDefinition } from "../../server/tool-definition.js";

const searchToolsInput = z
  .object({
    query: searchArgsShape.query.describe("e.g. \"create github issue\""),
    detail: searchArgsShape.detail.describe("Default summary; full: signatures of the tools named or the best few"),
    limit: searchArgsShape.limit.describe("Default: best 5 (summary) or 10"),
    server: searchArgsShape.server,
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

/** Where sandboxed code imports these tools from, in each language (from the language specs). */
const IN_CODE = `Import them from ${upstreamCallExamples()
  .flatMap(({ titles, example }) => (example.module ? [`\`${example.module}\` (${titles})`] : []))
  .join(" or ")}, or call them by id.`;

const POLICY_NOTE = { deny: " [denied by the tool policy]", approve: " [each call waits for a person's approval]" } as const;

type Hit = SearchHit & { policy?: keyof typeof POLICY_NOTE };

/** `server: a, b; other: c`: hits by name, grouped by server, best first. */
function namesByServer(hits: Hit[]): string {
  const groups = new Map<string, string[]>();
  for (const h of hits) groups.set(h.server, [...(groups.get(h.server) ?? []), `${h.name}${h.policy ? POLICY_NOTE[h.policy] : ""}`]);
  return [...groups].map(([server, names]) => `${server}: ${names.join(", ")}`).join("; ");
}

function renderHits(hits: Hit[], detail: string): string {
  const note = (h: Hit): string => (h.policy ? POLICY_NOTE[h.policy] : "");
  const summaryLine = (h: Hit): string => `${h.id}${note(h)}${h.summary ? ` — ${h.summary}` : ""}`;
  if (detail === "name") return hits.map((h) => `${h.id}${note(h)}`).join("\n");
  if (detail === "summary") return hits.map(summaryLine).join("\n");
  const full = hits.filter((h) => h.signature !== undefined);
  const rest = hits.filter((h) => h.signature === undefined);
  const declarations = compactSignatures(full.map((h) => ({ signature: h.signature ?? "", ...(h.python ? { python: h.python } : {}) })));
  const blocks = full.map((h, i) => `// ${h.id}${note(h)}\n${declarations[i]}`);
  if (rest.length > 0) blocks.push(`Also matching (search a name for its signature): ${namesByServer(rest)}`);
  return blocks.join("\n\n");
}

export function createCodeModeTools(ctx: ServerContext): ToolDefinition[] {
  const { codeMode } = ctx;
  // The codemode profile does not list the list_servers tool: point at what code calls instead.
  const listServersHint = ctx.config.server.toolProfile === "full" ? "list_servers" : "list_servers() in execute_code";

  const searchTools = defineTool({
    name: "search_tools",
    scope: "execute",
    title: "Search upstream tools",
    description:
      "Find upstream MCP tools for execute_code's code, best first; detail \"full\" gives TypeScript and Python signatures. " + IN_CODE,
    input: searchToolsInput,
    output: searchToolsOutput,
    annotations: { title: "Search upstream tools", readOnlyHint: true, openWorldHint: false },
    async run(args) {
      const detail = args.detail ?? "summary";
      const { tools, total_tools: total } = discoverTools(codeMode.discoverySource(), args);
      const text =
        total === 0
          ? `No upstream tools are available: no MCP server is configured (mcpServers) or none is connected. ${listServersHint} shows their state.`
          : tools.length === 0
            ? `No tool matches "${args.query}" among ${total} tools. Try other words, or ${listServersHint}.`
            : renderHits(tools, detail);
      return { structured: { tools, total_tools: total }, text };
    },
  });

  const listServers = defineTool({
    name: "list_servers",
    scope: "execute",
    title: "List upstream servers",
    description: "List the upstream MCP servers code can call: state, tool count, modules to import.",
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

  // The codemode profile lists search_tools as it is.
  searchTools.codemode = searchTools;
  return [searchTools, listServers];
}
