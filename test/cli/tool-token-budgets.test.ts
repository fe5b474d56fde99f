// What sandgate's own tool definitions cost a model before any work, per tool and profile, and the
// codemode profile (SANDGATE_TOOLS=codemode): exactly execute_code and search_tools over real MCP
// (HTTP and stdio), the others refused as unknown tools, REST untouched.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { SandgateConfig, ServerConfig, ToolProfile } from "../../src/config/index.js";
import { countTokens } from "../../src/execution/index.js";
import { startHttpServer, type RunningServer } from "../../src/server/index.js";
import { connectStdio, runCli } from "../fixtures/cli.js";
import { callTool, connectMcp, toolText } from "../fixtures/mcp-client.js";
import { useTestEngine } from "../helpers.js";
import { jsonApi, serverContext } from "../server-helpers.js";

/** Tokens (o200k) of each tool as a model sees it: name, description and input schema. */
const BUDGETS: Record<ToolProfile, Record<string, number>> = {
  full: {
    execute_code: 590,
    execute_command: 225,
    search_tools: 195,
    list_servers: 50,
    get_job: 170, // until: "end" (wait for the end only) added about 20
    stop_job: 65,
    analyze_code: 125,
    get_sessions: 70,
    stop_session: 65,
    fork_session: 115, // sessions.fork, the first operation declared once (features/sessions)
    file_read: 115,
    file_write: 110,
    file_list: 75,
    get_volume_path: 50,
  },
  codemode: { execute_code: 580, search_tools: 195 },
};
// full: 1850 until fork_session (111 tokens) joined it.
const TOTALS: Record<ToolProfile, number> = { full: 1965, codemode: 770 };
/** Tokens of the server's `initialize` instructions: under codemode they do not repeat execute_code's description. */
const INSTRUCTIONS: Record<ToolProfile, number> = { full: 140, codemode: 40 };

/** The full profile's tools the codemode profile hides (code reaches them itself, or they are not needed). */
const HIDDEN = ["execute_command", "list_servers", "get_job", "stop_job", "analyze_code", "get_sessions", "stop_session", "fork_session", "file_read", "file_write", "file_list", "get_volume_path"];

const fx = useTestEngine({}, { python: 1, javascript: 0, bash: 0 });

/**
 * A real server on port 0 under `profile`, with two upstream servers configured by name (as a
 * deployment has them, so the descriptions say how to call them; none is started here).
 */
async function withProfile(profile: ToolProfile, fn: (client: Client, server: RunningServer) => Promise<void>): Promise<void> {
  const config: SandgateConfig = {
    ...fx.config,
    mcpServers: { github: { command: "npx", args: [], env: {} }, filesystem: { command: "npx", args: [], env: {} } },
  };
  const overrides: Partial<ServerConfig> = { toolProfile: profile };
  const server = await startHttpServer(serverContext(fx.engine, config, overrides));
  try {
    const { client } = await connectMcp(server.url);
    try {
      await fn(client, server);
    } finally {
      await client.close();
    }
  } finally {
    await server.close();
  }
}

const tokensOf = (tool: Tool): number => countTokens(JSON.stringify({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }));

describe.each(["full", "codemode"] as const)("the %s profile's tool definitions", (profile) => {
  it("each stay within their token budget, and so does the whole list", async () => {
    await withProfile(profile, async (client) => {
      const { tools } = await client.listTools();
      const spent = Object.fromEntries(tools.map((tool) => [tool.name, tokensOf(tool)]));
      // Every listed tool has a budget: a new tool is measured before it ships.
      expect(Object.keys(spent).sort()).toEqual(Object.keys(BUDGETS[profile]).sort());
      for (const [name, tokens] of Object.entries(spent)) expect(tokens, `${name} costs ${tokens} tokens`).toBeLessThanOrEqual(BUDGETS[profile][name] ?? 0);
      const total = Object.values(spent).reduce((a, b) => a + b, 0);
      expect(total, `the ${profile} tool list costs ${total} tokens`).toBeLessThanOrEqual(TOTALS[profile]);
      const instructions = client.getInstructions() ?? "";
      expect(countTokens(instructions), instructions).toBeLessThanOrEqual(INSTRUCTIONS[profile]);
      expect(instructions).toMatch(/execute_code.*search_tools.*print only what you need/);
    });
  });
});

describe("the codemode profile over MCP", () => {
  it("lists exactly execute_code and search_tools, refuses the others as unknown tools, and runs code in a real sandbox", async () => {
    await withProfile("codemode", async (client, server) => {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["execute_code", "search_tools"]);
      for (const name of ["execute_command", "get_sessions", "file_read", "list_servers"]) {
        await expect(client.callTool({ name, arguments: {} }), name).rejects.toThrow(new RegExp(`unknown tool "${name}"; the tools are execute_code, search_tools`));
      }
      // No get_job to poll a job with, so no background argument either.
      const execute = tools.find((t) => t.name === "execute_code");
      expect(Object.keys(execute?.inputSchema.properties ?? {})).not.toContain("background");
      await expect(client.callTool({ name: "execute_code", arguments: { language: "python", code: "1", background: true } })).rejects.toThrow(/unknown argument .*background/);

      // The agent is told that code can search, and of no tool it cannot call.
      expect(execute?.description).toMatch(/searchTools\/listServers \(JS\/TS\), search_tools\/list_servers \(Python\), sandgate-tool --search\/--servers \(Bash\)/);
      const prompt = await client.getPrompt({ name: "use_sandgate", arguments: {} });
      const told = [...tools.map((t) => t.description ?? ""), client.getInstructions() ?? "", (prompt.messages[0]?.content as { text: string }).text].join("\n");
      for (const hidden of HIDDEN.filter((name) => name !== "list_servers")) expect(told, hidden).not.toContain(hidden);

      const ran = await callTool(client, "execute_code", { language: "python", code: "import os\nopen('/workspace/n.txt', 'w').write('7')\nint(open('/workspace/n.txt').read()) * 6", session_id: "cm" });
      expect(ran.structuredContent).toMatchObject({ status: "ok", value: 42 });
      expect(toolText(ran)).toMatch(/^\[value\] 42\n\[ok, \d+ ms\]$/);

      // REST keeps every route; GET /mcp/tools shows what tools/list shows.
      const api = jsonApi(() => server.url);
      const sessions = await api<{ sessions: unknown[] }>("/sessions");
      expect(sessions.status).toBe(200);
      expect(Array.isArray(sessions.body.sessions)).toBe(true);
      const listed = await api<{ tools: Array<{ name: string }> }>("/mcp/tools");
      expect(listed.body.tools.map((t) => t.name)).toEqual(["execute_code", "search_tools"]);
    });
  });

  it("over stdio (sandgate stdio --tools codemode) lists the same two tools and refuses the others", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-profile-stdio-"));
    const { client } = await connectStdio({ SANDBOX_DIR: dir, SANDGATE_POOL: "python=0,javascript=0,bash=0" }, { name: "profile-test", args: ["--tools", "codemode"] });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["execute_code", "search_tools"]);
      await expect(client.callTool({ name: "get_sessions", arguments: {} })).rejects.toThrow(/unknown tool "get_sessions"/);
    } finally {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses an unknown profile from --tools or SANDGATE_TOOLS with one line naming the profiles", async () => {
    const flag = await runCli(["serve", "--tools", "lean"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--tools lean is not a tool profile; use full or codemode \[CONFIG_INVALID\]/);
    const env = await runCli(["stdio"], { env: { SANDGATE_TOOLS: "lean" } });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/SANDGATE_TOOLS="lean" is not one of full or codemode/);
  });
});
