// The discovery operations of code mode: search the upstream tools (search_tools) and list the
// upstream servers (list_servers). They disclose the upstream catalog a little at a time, so an
// agent never carries every tool definition in its context.

import { z } from "zod";
import type { SandgateConfig } from "../../config/index.js";
import { upstreamCallExamples } from "../../languages/index.js";
import { defineOperation } from "../../operations/index.js";
import type { CodeMode } from "./code-mode.js";
import { discoverServers, discoverTools, searchArgsShape } from "./discovery.js";
import { compactSignatures } from "./signature-text.js";

/** What discovery runs on: code mode's catalog and servers, and the tool profile its advice names tools of. */
export interface CodemodeHost {
  codeMode: Pick<CodeMode, "discoverySource">;
  config: { server: Pick<SandgateConfig["server"], "toolProfile"> };
}

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
const searchToolsOutput = z.object({ tools: z.array(hitSchema), total_tools: z.number().int() });

const listServersInput = z.object({}).strict();
const listServersOutput = z.object({
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

type Hit = z.infer<typeof hitSchema>;

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

/** How advice names the server list: the tool in the full profile, which lists it; what code calls in the codemode profile, which does not. */
const listServersHint = (host: CodemodeHost): string => (host.config.server.toolProfile === "full" ? "list_servers" : "list_servers() in execute_code");

export const searchTools = defineOperation({
  id: "codemode.search",
  summary: "Ranked search over the upstream tools that code can call",
  scope: "execute",
  effects: ["read"],
  input: searchToolsInput,
  output: searchToolsOutput,
  run: async (host: CodemodeHost, input) => discoverTools(host.codeMode.discoverySource(), input),
  surfaces: {
    mcp: {
      tool: "search_tools",
      title: "Search upstream tools",
      description: "Find upstream MCP tools for execute_code's code, best first; detail \"full\" gives TypeScript and Python signatures. " + IN_CODE,
      codemode: true,
      text: (out, input, host) =>
        out.total_tools === 0
          ? `No upstream tools are available: no MCP server is configured (mcpServers) or none is connected. ${listServersHint(host)} shows their state.`
          : out.tools.length === 0
            ? `No tool matches "${input.query}" among ${out.total_tools} tools. Try other words, or ${listServersHint(host)}.`
            : renderHits(out.tools, input.detail ?? "summary"),
    },
    // Raw (server/http/rest-routes.ts): GET /tools/search takes the words as ?q= and the limit as a string.
    rest: null,
    sandbox: {
      names: { python: "search_tools", javascript: "searchTools", bash: "search" },
      positional: ["query"],
      returns: "tools",
      doc: "The upstream tools that match the words of `query`, best first, as the search_tools MCP tool finds them: id, server, name, score, and by detail a summary, a TypeScript signature and a Python one; policy says when the tool policy denies a tool or holds its calls for approval.",
    },
  },
});

export const listServers = defineOperation({
  id: "codemode.servers",
  summary: "Upstream MCP servers: state, tool count, module names, why one is down",
  scope: "execute",
  effects: ["read"],
  input: listServersInput,
  output: listServersOutput,
  run: async (host: CodemodeHost) => ({ servers: discoverServers(host.codeMode.discoverySource()) }),
  surfaces: {
    mcp: {
      tool: "list_servers",
      title: "List upstream servers",
      description: "List the upstream MCP servers code can call: state, tool count, modules to import.",
      text: ({ servers }) =>
        servers.length === 0
          ? "No upstream MCP servers are configured (mcpServers in sandgate.json)."
          : servers
              .map((s) => `${s.name}: ${s.state}, ${s.tool_count} tools${s.ts_module ? ` (${s.ts_module}, ${s.py_module})` : ""}${s.error ? ` — ${s.error}` : ""}`)
              .join("\n"),
    },
    rest: { method: "get", path: "/servers", tag: "code mode", description: null },
    sandbox: {
      names: { python: "list_servers", javascript: "listServers", bash: "servers" },
      returns: "servers",
      doc: "The upstream servers: name, state, transport, tool count, the modules to import, and why a server is not ready.",
    },
  },
});
