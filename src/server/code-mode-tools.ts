// The discovery tools of code mode: search_tools and list_servers. They disclose the upstream
// catalog a little at a time, so an agent never carries every tool definition in its context.

import { z } from "zod";
import { fullSignatureCount, type SearchHit } from "../catalog/index.js";
import { listServers as discoverServers, searchArgsShape, searchTools as discoverTools } from "../codemode/index.js";
import { upstreamCallExamples } from "../languages/index.js";
import type { ServerContext } from "./context.js";
import { compactSignatures } from "./signature-text.js";
import { defineTool, type ToolDefinition } from "./tool-definition.js";

const searchToolsInput = z
  .object({
    query: searchArgsShape.query.describe("e.g. \"create github issue\""),
    detail: searchArgsShape.detail.describe("Default summary; full: signatures of the best matches"),
    limit: searchArgsShape.limit.describe("Default 10"),
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
const IN_CODE = `Import them in code from ${upstreamCallExamples()
  .flatMap(({ titles, example }) => (example.module ? [`\`${example.module}\` (${titles})`] : []))
  .join(" or ")}, or call them by id.`;

const POLICY_NOTE = { deny: " [denied by the tool policy]", approve: " [each call waits for a person's approval]" } as const;

type Hit = SearchHit & { policy?: keyof typeof POLICY_NOTE };

/**
 * detail "full" without a limit: only the best hits keep their signatures (see fullSignatureCount),
 * the rest their one-line summaries; an explicit limit gets every hit in full.
 */
function trimFull<H extends Hit>(hits: H[], limited: boolean): H[] {
  if (limited) return hits;
  const full = fullSignatureCount(hits.map((h) => h.score));
  return hits.map((h, i) => {
    if (i < full) return h;
    const { signature: _signature, python: _python, ...rest } = h;
    return rest as H;
  });
}

function renderHits(hits: Hit[], detail: string): string {
  const note = (h: Hit): string => (h.policy ? POLICY_NOTE[h.policy] : "");
  const summaryLine = (h: Hit): string => `${h.id}${note(h)}${h.summary ? ` — ${h.summary}` : ""}`;
  if (detail === "name") return hits.map((h) => `${h.id}${note(h)}`).join("\n");
  if (detail === "summary") return hits.map(summaryLine).join("\n");
  const full = hits.filter((h) => h.signature !== undefined);
  const rest = hits.filter((h) => h.signature === undefined);
  const declarations = compactSignatures(full.map((h) => h.signature ?? ""));
  const blocks = full.map((h, i) => [`// ${h.id}${note(h)}`, declarations[i], h.python ? `# Python: ${h.python}` : ""].filter(Boolean).join("\n"));
  if (rest.length > 0) {
    blocks.push(`Also matching (for their signatures, search their names with detail "full", or pass a limit):\n${rest.map(summaryLine).join("\n")}`);
  }
  return blocks.join("\n\n");
}

export function createCodeModeTools(ctx: ServerContext): ToolDefinition[] {
  const { codeMode } = ctx;

  const searchTools = defineTool({
    name: "search_tools",
    scope: "execute",
    title: "Search upstream tools",
    description:
      "Find upstream MCP tools that execute_code's code can call, best first; detail \"full\" gives TypeScript and Python signatures. " + IN_CODE,
    input: searchToolsInput,
    output: searchToolsOutput,
    annotations: { title: "Search upstream tools", readOnlyHint: true, openWorldHint: false },
    async run(args) {
      const detail = args.detail ?? "summary";
      const found = discoverTools(codeMode.discoverySource(), args);
      const tools = detail === "full" ? trimFull(found.tools, args.limit !== undefined) : found.tools;
      const total = found.total_tools;
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

  return [searchTools, listServers];
}
