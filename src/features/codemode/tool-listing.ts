// Every upstream tool by name, and one tool's whole definition: codemode.tools (list_mcp_tools() in
// code, GET /tools) and codemode.tool (get_mcp_tool_details(name) in code), as code written for
// the usual code-execution template expects them, with names as `server__tool`.

import { z } from "zod";
import { SandgateError } from "../../errors/index.js";
import { defineOperation } from "../../operations/index.js";
import { toolPolicyFor } from "../governance/index.js";
import type { CatalogTool } from "./catalog/index.js";
import type { CodemodeHost } from "./operations.js";
import { unavailableServer } from "./discovery.js";
import { toolNotFoundMessage } from "./tool-not-found.js";

const policyField = z
  .enum(["deny", "approve"])
  .optional()
  .describe("Set when the tool policy refuses calls to this tool (deny) or makes each wait for a person's approval (approve)");

const listedTool = z.object({
  name: z.string().describe("server__tool: what callMCPTool / call_mcp_tool and get_mcp_tool_details take (so does id)"),
  id: z.string().describe("server.tool"),
  server: z.string(),
  summary: z.string(),
  policy: policyField,
});

const toolDetails = z.object({
  name: z.string().describe("server__tool"),
  id: z.string().describe("server.tool"),
  server: z.string(),
  tool: z.string().describe("The tool's own name on its server"),
  title: z.string().optional(),
  description: z.string(),
  input_schema: z.record(z.unknown()).describe("JSON Schema of the arguments"),
  output_schema: z.record(z.unknown()).optional().describe("JSON Schema of the result, declared by the server or inferred from its answers"),
  policy: policyField,
});

/** The first line of a description, at most 200 characters. */
function firstLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/** `server__tool`. */
const prefixed = (tool: CatalogTool): string => `${tool.server}__${tool.name}`;

function policyOf(host: CodemodeHost, tool: CatalogTool): { policy?: "deny" | "approve" } {
  const { action } = toolPolicyFor(host.codeMode.discoverySource().policy, tool.server, tool.name, [tool.tsName, tool.pyName]);
  return action === "allow" ? {} : { policy: action };
}

export const listMcpTools = defineOperation({
  id: "codemode.tools",
  summary: "Every upstream tool code can call, by name (server__tool), with a one-line summary",
  scope: "execute",
  effects: ["read"],
  idempotent: true,
  input: z.object({ server: z.string().max(64).optional().describe("Only this server's tools") }).strict(),
  output: z.object({ tools: z.array(listedTool) }),
  run: async (host: CodemodeHost, input) => {
    const source = host.codeMode.discoverySource();
    if (input.server !== undefined) {
      const down = unavailableServer(source, input.server);
      if (down) throw down;
      if (!source.catalog.servers().some((s) => s.name === input.server)) {
        throw new SandgateError("INVALID_INPUT", `no upstream server ${JSON.stringify(input.server)}; the servers are ${source.catalog.servers().map((s) => s.name).join(", ") || "none"}`, { data: { field: "server" } });
      }
    }
    // `server__tool` is one tool's name unless two spell alike (server a's b__c, server a__b's c): those go by their ids.
    const spelled = new Map<string, number>();
    for (const tool of source.catalog.tools()) spelled.set(prefixed(tool), (spelled.get(prefixed(tool)) ?? 0) + 1);
    return {
      tools: source.catalog.tools(input.server).map((tool) => ({
        name: (spelled.get(prefixed(tool)) ?? 0) > 1 ? tool.id : prefixed(tool),
        id: tool.id,
        server: tool.server,
        summary: firstLine(tool.description || tool.title || tool.name),
        ...policyOf(host, tool),
      })),
    };
  },
  surfaces: {
    mcp: null,
    rest: { method: "get", path: "/tools", tag: "code mode", description: "Every tool, by name; GET /tools/search ranks them for a task instead." },
    sandbox: {
      names: { python: "list_mcp_tools", javascript: "list_mcp_tools", bash: "list-tools" },
      returns: "tools",
      doc: "Every upstream tool: name (server__tool, for callMCPTool and get_mcp_tool_details), id, server, a one-line summary, and policy when the tool policy denies it or holds its calls for approval.",
    },
  },
});

export const getMcpToolDetails = defineOperation({
  id: "codemode.tool",
  summary: "One upstream tool's whole definition: description and the JSON Schemas of its arguments and result",
  scope: "execute",
  effects: ["read"],
  idempotent: true,
  input: z.object({ name: z.string().min(1).max(512).describe("server__tool, server.tool, or a tool name one server has") }).strict(),
  output: toolDetails,
  run: async (host: CodemodeHost, input) => {
    const { catalog } = host.codeMode.discoverySource();
    const found = catalog.candidates(input.name);
    const tool = found[0];
    if (found.length > 1) {
      throw new SandgateError("TOOL_NOT_FOUND", `tool name ${input.name} is on ${found.length} servers (${found.map((t) => t.id).join(", ")}); name one as server__tool`, { data: { tool: input.name } });
    }
    if (!tool) throw new SandgateError("TOOL_NOT_FOUND", toolNotFoundMessage(catalog, input.name), { data: { tool: input.name } });
    return {
      name: catalog.resolve(prefixed(tool))?.id === tool.id ? prefixed(tool) : tool.id,
      id: tool.id,
      server: tool.server,
      tool: tool.name,
      ...(tool.title ? { title: tool.title } : {}),
      description: tool.description,
      input_schema: tool.inputSchema,
      ...(tool.outputSchema ? { output_schema: tool.outputSchema } : {}),
      ...policyOf(host, tool),
    };
  },
  surfaces: {
    mcp: null,
    rest: null,
    sandbox: {
      names: { python: "get_mcp_tool_details", javascript: "get_mcp_tool_details", bash: "tool-details" },
      positional: ["name"],
      doc: "One upstream tool's whole definition: name (server__tool), id, server, its own name, description, input_schema and (when known) output_schema as JSON Schema, and policy.",
    },
  },
});
