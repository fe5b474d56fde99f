// Code mode end to end: the real reference MCP servers (stdio and Streamable HTTP) behind
// sandgate, discovered over MCP and called from sandboxed Python, JavaScript, TypeScript and Bash.

import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { LoggingMessageNotificationSchema, ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandgateConfig } from "../../src/config/index.js";
import { CodeMode } from "../../src/features/codemode/index.js";
import type { RunningServer } from "../../src/server/index.js";
import { freePort, isAlive, waitFor } from "../fixtures/upstream/helpers.js";
import { startCodeModeStack, type CodeModeStack } from "../fixtures/code-mode-stack.js";
import { callTool, toolText, type ToolResult } from "../fixtures/mcp-client.js";

const NODE = process.execPath;
const PKG = join(process.cwd(), "node_modules/@modelcontextprotocol");
const EVERYTHING = join(PKG, "server-everything/dist/index.js");
const SECRET = "sg-canary-env-7f3a9c1e55";
const HEADER_SECRET = "sg-canary-header-4b2d8e";

let dir: string;
let config: SandgateConfig;
let codeMode: CodeMode;
let server: RunningServer;
let client: Client;
let httpUpstream: ChildProcess;
let stack: CodeModeStack | undefined;

const tool = (name: string, args: Record<string, unknown> = {}): Promise<ToolResult> => callTool(client, name, args);

interface WireResult {
  status: string;
  stdout: string;
  stderr: string;
  error?: { type: string; message: string };
  tool_calls: { tool: string; ok: boolean; duration_ms: number; error?: string }[];
  tokens: { returned: number; output: number; tool_results: number };
  output_note?: string;
  full_output?: { stdout?: string };
}

async function run(language: string, code: string, extra: Record<string, unknown> = {}): Promise<WireResult> {
  const result = await tool("execute_code", { language, code, ...extra });
  return result.structuredContent as unknown as WireResult;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-codemode-"));
  chmodSync(dir, 0o755);
  const files = join(dir, "files");
  mkdirSync(files);
  writeFileSync(join(files, "notes.txt"), "alpha\nbeta\ngamma\n");
  const port = await freePort();
  httpUpstream = spawn(NODE, [EVERYTHING, "streamableHttp"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  httpUpstream.stderr?.on("data", (chunk: Buffer) => (log += chunk.toString()));
  expect(await waitFor(() => log.includes("listening"), 15_000)).toBe(true);

  const servers = {
    everything: { command: NODE, args: [EVERYTHING, "stdio"], env: { SANDGATE_TEST_SECRET: SECRET }, timeoutS: 3 },
    filesystem: { command: NODE, args: [join(PKG, "server-filesystem/dist/index.js"), files] },
    memory: { command: NODE, args: [join(PKG, "server-memory/dist/index.js")], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } },
    remote: { url: `http://127.0.0.1:${port}/mcp`, headers: { "X-Test-Token": HEADER_SECRET } },
  };
  stack = await startCodeModeStack(dir, {
    servers,
    codeMode: { maxToolCallsPerExecution: 40, outputTokenBudget: 1000 },
    pool: { python: 1, javascript: 1, bash: 1 },
    name: "code-mode-test",
  });
  ({ config, codeMode, server, client } = stack);
}, 60_000);

afterAll(async () => {
  await stack?.close();
  httpUpstream?.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe("discovery", () => {
  it("lists every upstream server with its state and modules", async () => {
    const { structuredContent } = await tool("list_servers");
    const servers = structuredContent.servers as { name: string; state: string; tool_count: number; ts_module?: string; py_module?: string }[];
    expect(servers.map((s) => s.name).sort()).toEqual(["everything", "filesystem", "memory", "remote"]);
    for (const s of servers) {
      expect(s.state, s.name).toBe("ready");
      expect(s.tool_count).toBeGreaterThan(5);
    }
    expect(servers.find((s) => s.name === "memory")).toMatchObject({ ts_module: "sandgate:servers/memory", py_module: "servers.memory" });
  });

  it("tells the agent in execute_code's description how code calls upstream tools", async () => {
    const { tools } = await client.listTools();
    const description = tools.find((t) => t.name === "execute_code")?.description ?? "";
    expect(description).toContain("(everything, filesystem, memory, remote)");
    expect(description).toMatch(/search_tools[\s\S]*callMCPTool[\s\S]*call_mcp_tool[\s\S]*sandgate-tool/);
  });

  it("ranks search results and discloses detail only on request", async () => {
    const names = await tool("search_tools", { query: "knowledge graph entities", detail: "name", limit: 3 });
    const ids = (names.structuredContent.tools as { id: string; signature?: string; summary?: string }[]).map((t) => t.id);
    expect(ids.every((id) => id.startsWith("memory."))).toBe(true);
    expect((names.structuredContent.tools as { summary?: string }[])[0]?.summary).toBeUndefined();

    const full = await tool("search_tools", { query: "sum two numbers", detail: "full", limit: 2, server: "everything" });
    const first = (full.structuredContent.tools as { id: string; signature?: string }[])[0];
    expect(first?.id).toBe("everything.get-sum");
    expect(first?.signature).toMatch(/interface GetSumInput[\s\S]*a: number[\s\S]*Promise</);
    expect(full.structuredContent.total_tools).toBeGreaterThan(40);

    // A tool without an output schema, before any call taught one: `Promise<unknown>`, no empty type, no title repeating the name.
    const text = toolText(await tool("search_tools", { query: "get-sum", detail: "full", server: "everything" }));
    expect(text).toMatch(/^\/\/ everything\.get-sum\ninterface GetSumInput \{\n {2}a: number;\n {2}b: number;\n\}\n\/\*\* [^\n]*sum[^\n]* \*\/\ndeclare function getSum\(input: GetSumInput\): Promise<unknown>; \/\/ Python: await get_sum\(\*\*input\)$/m);
    expect(text).not.toMatch(/GetSumOutput|no output schema|Get Sum Tool/);
  });

  it("rejects a search without words as a malformed call", async () => {
    await expect(client.callTool({ name: "search_tools", arguments: { query: "  " } })).rejects.toThrow(/query/);
  });

  it("offers the same discovery over REST", async () => {
    const servers = (await (await fetch(`${server.url}/servers`)).json()) as { servers: { name: string; state: string }[] };
    expect(servers.servers.filter((s) => s.state === "ready")).toHaveLength(4);
    const found = await fetch(`${server.url}/tools/search?q=${encodeURIComponent("sum two numbers")}&detail=name&limit=1&server=everything`);
    expect(await found.json()).toMatchObject({ tools: [{ id: "everything.get-sum" }] });
    const bad = await fetch(`${server.url}/tools/search?detail=name`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "INVALID_INPUT", message: expect.stringMatching(/q/) });
  });

  it("serves the generated tree as resources", async () => {
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toContain("sandgate://tools/servers/memory/index.ts");
    const read = await client.readResource({ uri: "sandgate://tools/servers/everything/getSum.ts" });
    expect((read.contents[0] as { text: string }).text).toMatch(/export async function getSum/);
  });
});

describe("calling tools from code", () => {
  it("Python: generated module, call_mcp_tool and asyncio.gather", async () => {
    const r = await run(
      "python",
      [
        "import asyncio",
        "from servers.memory import create_entities, read_graph",
        'await create_entities(entities=[{"name": "alice", "entityType": "person", "observations": ["likes tea"]}])',
        "graph = await read_graph()",
        'sums = await asyncio.gather(*[call_mcp_tool("everything.get-sum", {"a": i, "b": 100}) for i in range(12)])',
        'weather = await call_mcp_tool("everything.get_structured_content", {"location": "Chicago"})',
        'print([e["name"] for e in graph["entities"]], sums[0], sums[11], sorted(weather))',
      ].join("\n"),
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.stdout).toContain("['alice'] The sum of 0 and 100 is 100. The sum of 11 and 100 is 111. ['conditions', 'humidity', 'temperature']");
    expect(r.tool_calls).toHaveLength(15);
    expect(r.tool_calls.every((c) => c.ok)).toBe(true);
    expect(r.tool_calls[0]?.tool).toBe("memory.create_entities");
    expect(r.tokens.tool_results).toBeGreaterThan(r.tokens.returned / 4);
  });

  it("Python code that makes no tool call does not pay for asyncio", async () => {
    await run("python", "x = 1", { session_id: "lean" });
    const r = await run("python", "import sys\nprint('asyncio' in sys.modules)", { session_id: "lean" });
    expect(r.stdout.trim()).toBe("False");
    await tool("stop_session", { session_id: "lean" });
  });

  it("JavaScript: static import of a server module, Promise.all, and the servers global", async () => {
    const r = await run(
      "javascript",
      [
        'import { getSum, echo } from "sandgate:servers/everything";',
        "const sums = await Promise.all([1, 2, 3].map((a) => getSum({ a, b: 10 })));",
        'const echoed = await servers.remote.echo({ message: "over http" });',
        'const dirs = await callMCPTool("filesystem.list_allowed_directories", {});',
        "console.log(sums.join(' | '), '/', echoed, '/', typeof dirs);",
      ].join("\n"),
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.stdout).toContain("The sum of 1 and 10 is 11. | The sum of 2 and 10 is 12. | The sum of 3 and 10 is 13. / Echo: over http / object");
    expect(r.tool_calls.map((c) => c.tool)).toContain("remote.echo");
  });

  it("TypeScript: typed call through the generated module", async () => {
    const r = await run(
      "typescript",
      [
        'import { getStructuredContent, type GetStructuredContentInput } from "sandgate:servers/everything";',
        'const input: GetStructuredContentInput = { location: "New York" };',
        "const weather = await getStructuredContent(input);",
        "console.log(typeof weather.temperature, weather.conditions.length > 0);",
      ].join("\n"),
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.stdout.trim()).toBe("number true");
  });

  it("Bash: sandgate-tool prints JSON for a pipeline", async () => {
    const r = await run("bash", `sandgate-tool everything get-sum '{"a": 4, "b": 5}' | python3 -c 'import json,sys; print(json.load(sys.stdin).upper())'`);
    expect(r.status, r.stderr).toBe("ok");
    expect(r.stdout.trim()).toBe("THE SUM OF 4 AND 5 IS 9.");
    expect(r.tool_calls).toEqual([expect.objectContaining({ tool: "everything.get-sum", ok: true })]);
  });

  it("the generated tree is readable inside the sandbox, and read-only", async () => {
    // 9 tool files and index.ts.
    const r = await run("bash", "grep -c 'export' /sandgate/tools/servers/memory/*.ts | wc -l; ls /sandgate/tools/python/servers; touch /sandgate/tools/x 2>&1 | grep -c 'Read-only'");
    expect(r.stdout.split("\n").filter(Boolean)).toEqual(["10", "__init__.py", "everything", "filesystem", "memory", "remote", "1"]);
  });
});

describe("failures reach the code as errors that name the tool", () => {
  it("an upstream isError result raises ToolError in Python with the upstream message", async () => {
    const r = await run(
      "python",
      [
        "try:",
        '    await call_mcp_tool("filesystem.read_text_file", {"path": "/etc/passwd"})',
        "except ToolError as e:",
        "    print('caught', e.tool, '|', e)",
      ].join("\n"),
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.stdout).toMatch(/caught filesystem\.read_text_file \| .*filesystem\.read_text_file.*Access denied/);
    expect(r.tool_calls[0]).toMatchObject({ ok: false, error: expect.stringContaining("Access denied") });
  });

  it("an unknown tool fails with the closest matches; an uncaught error fails the run", async () => {
    const r = await run("javascript", 'await callMCPTool("everything.get_summ", { a: 1, b: 2 });');
    expect(r.status).toBe("error");
    expect(r.error?.message).toMatch(/everything\.get_summ/);
    expect(r.error?.message).toMatch(/everything\.get-sum/);
  });

  it("an id with a typo, a misspelt server or no server part names the tool that was meant", async () => {
    const r = await run(
      "python",
      [
        'for ref in ["everything.echoo", "memory.readgraph", "memry.read_graph", "readgraph"]:',
        "    try:",
        "        await call_mcp_tool(ref, {})",
        "    except ToolError as e:",
        '        print(e.kind, "|", e.message)',
      ].join("\n"),
    );
    expect(r.status, r.stderr).toBe("ok");
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ToolNotFound \| server `everything` has no tool `echoo`; similar: everything\.echo\b/);
    expect(lines[1]).toMatch(/^ToolNotFound \| server `memory` has no tool `readgraph`; similar: memory\.read_graph\b/);
    expect(lines[2]).toMatch(/^ToolNotFound \| no upstream server `memry` \(servers: [a-z, ]+\); similar: memory\.read_graph$/);
    // A bare name that is one server's tool is that tool (tool-policy-names.test.ts); a typo of one is named.
    expect(lines[3]).toMatch(/^ToolNotFound \| tool `readgraph` is not a tool id; ids look like `server\.tool` \(servers: [a-z, ]+\); similar: memory\.read_graph$/);
  });

  it("Python reaches a server's module as an attribute of `servers`, and a missing tool's error lists the server's tools", async () => {
    const r = await run(
      "python",
      [
        "import servers",
        "g = await servers.memory.read_graph()",
        "print(sorted(g))",
        "for name in ('memory.read_grap', 'memry'):",
        "    try:",
        "        eval('servers.' + name)",
        "    except AttributeError as e:",
        "        print(e)",
      ].join("\n"),
    );
    expect(r.status, r.error?.message).toBe("ok");
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe("['entities', 'relations']");
    expect(lines[1]).toMatch(/^server 'memory' has no tool 'read_grap'; its tools are: create_entities, .*\bread_graph\b/);
    expect(lines[2]).toMatch(/^no server module 'memry' in servers; the modules are: [a-z, ]*\bmemory\b/);
  });

  it("the agent's text sums up the tool calls and names the failed ones", async () => {
    const result = await tool("execute_code", {
      language: "python",
      code: 'await call_mcp_tool("everything.echo", {"message": "a"})\ntry:\n    await call_mcp_tool("memory.no_such_tool", {})\nexcept ToolError:\n    pass',
    });
    const text = (result.content[0] as { text: string }).text;
    expect(text).toMatch(/\[tool calls\] 2 \(1 ok, 1 failed; slowest /);
    expect(text).toMatch(/- memory\.no_such_tool: server `memory` has no tool `no_such_tool`/);
  });

  it("a call past its timeout names the call that was running", async () => {
    const r = await run("python", 'await call_mcp_tool("everything.trigger-long-running-operation", {"duration": 10, "steps": 2})');
    expect(r.status).toBe("error");
    expect(r.error?.message).toMatch(/everything\.trigger-long-running-operation.*timed out after 3 s/);
    expect(r.tool_calls[0]).toMatchObject({ ok: false, tool: "everything.trigger-long-running-operation" });
  });

  it("caps the number of tool calls in one execution", async () => {
    const r = await run("python", ['n = 0', "try:", "    for i in range(60):", '        await call_mcp_tool("everything.echo", {"message": "x"}); n += 1', "except ToolError as e:", "    print(n, e.kind)"].join("\n"));
    expect(r.stdout.trim()).toBe("40 ToolLimit");
  });

  it("a server killed mid-call fails that call, then comes back", async () => {
    const status = (): ReturnType<CodeMode["status"]>[number] | undefined => codeMode.status().find((s) => s.name === "everything");
    const pid = status()?.pid;
    expect(pid).toBeGreaterThan(0);
    let listChanged = 0;
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void listChanged++);
    let printed = "";
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void (printed += String(n.params.data)));
    const running = run("python", 'print("calling", flush=True)\nawait call_mcp_tool("everything.trigger-long-running-operation", {"duration": 2, "steps": 2})');
    // Wait until the call is in flight upstream (it starts right after the print), then kill the server under it.
    expect(await waitFor(() => printed.includes("calling"), 10_000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 400));
    process.kill(pid!, "SIGKILL");
    const r = await running;
    expect(r.status).toBe("error");
    expect(r.error?.message).toMatch(/everything.*stopped during the call to `trigger-long-running-operation`/);
    expect(r.tool_calls[0]).toMatchObject({ ok: false, tool: "everything.trigger-long-running-operation" });
    expect(await waitFor(() => status()?.state === "ready", 15_000)).toBe(true);
    expect(status()?.pid).not.toBe(pid);
    // The reconnected server's tools were listed again, and the client was told the tree changed.
    expect(await waitFor(() => listChanged > 0, 5000)).toBe(true);
    const again = await run("python", 'print(await call_mcp_tool("everything.get-sum", {"a": 1, "b": 1}))');
    expect(again.stdout.trim()).toBe("The sum of 1 and 1 is 2.");
  });
});

describe("credentials and context", () => {
  it("no upstream secret is visible inside the sandbox", async () => {
    const r = await run(
      "bash",
      `cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c sg-canary; grep -rl sg-canary /sandgate /tmp /workspace 2>/dev/null | wc -l; env | grep -c sg-canary`,
    );
    expect(r.stdout.split("\n").filter(Boolean)).toEqual(["0", "0", "0"]);
    // The upstream did get it (its get-env tool lists the variable), but a tool result that echoes
    // a configured secret reaches the code masked.
    const env = await run("python", 'e = await call_mcp_tool("everything.get-env", {})\nprint(e["SANDGATE_TEST_SECRET"], "PATH" in e)');
    expect(env.stdout.trim()).toBe("******** True");
    expect(env.stdout).not.toContain(SECRET);
  });

  it("big intermediate data stays in the sandbox and long output is shortened structurally", async () => {
    const r = await run(
      "python",
      [
        "import json",
        'results = [await call_mcp_tool("everything.get-structured-content", {"location": c}) for c in ["New York", "Chicago", "Los Angeles"] * 3]',
        'print(json.dumps([{"i": i, "city": "x" * 40, "r": results[i % 9]} for i in range(2000)]))',
      ].join("\n"),
    );
    expect(r.status, r.stderr).toBe("ok");
    const shown = JSON.parse(r.stdout) as unknown[];
    expect(Array.isArray(shown)).toBe(true);
    expect(JSON.stringify(shown)).toMatch(/more items/);
    expect(r.output_note).toMatch(/full output/);
    expect(r.tokens.returned).toBeLessThan(1300);
    expect(r.tokens.output).toBeGreaterThan(30_000);
    const saved = await client.readResource({ uri: r.full_output!.stdout! });
    expect((saved.contents[0] as { text: string }).text.length).toBeGreaterThan(150_000);
  });
});

describe("output schemas inferred from real responses", () => {
  it("types a tool without outputSchema from its first result, and keeps it across restarts", async () => {
    // get-sum declares no outputSchema; earlier tests called it.
    const file = await client.readResource({ uri: "sandgate://tools/servers/everything/getSum.ts" });
    expect((file.contents[0] as { text: string }).text).toMatch(/inferred from \d+ responses?[\s\S]*export type GetSumOutput = string/);
    const saved = JSON.parse(readFileSync(join(dir, "inferred-output-schemas.json"), "utf8")) as Record<string, unknown>;
    expect(saved["everything.get-sum"]).toMatchObject({ type: "string", "x-inferred-from": expect.any(Number) });
    const next = new CodeMode({ ...config, mcpServers: { everything: config.mcpServers.everything! } }, { toolsDir: join(dir, "tools-3") });
    try {
      await next.start();
      expect(next.catalog.resolve("everything.get-sum")).toMatchObject({ outputSchemaInferred: true, outputSchema: { type: "string" } });
    } finally {
      await next.close();
    }
  });
});

describe("a large last-expression value", () => {
  it("is shortened to the token budget and stays JSON", async () => {
    const r = (await run("python", "[{'n': i, 'name': f'item {i}'} for i in range(1500)]")) as WireResult & { value: unknown[]; truncated: boolean };
    expect(r.status).toBe("ok");
    expect(Array.isArray(r.value)).toBe(true);
    expect(r.value[0]).toEqual({ n: 0, name: "item 0" });
    expect(JSON.stringify(r.value)).toMatch(/more items/);
    expect(r.truncated).toBe(true);
    expect(r.output_note).toMatch(/^value /);
    expect(r.tokens.returned).toBeLessThan(1100);
  });
});

describe("processes", () => {
  it("leaves no upstream process behind after close", async () => {
    const cm = new CodeMode({ ...config, mcpServers: { memory: config.mcpServers.memory! } }, { toolsDir: join(dir, "tools-2") });
    await cm.start();
    const pid = cm.status()[0]?.pid;
    expect(cm.status()[0]?.state).toBe("ready");
    expect(isAlive(pid!)).toBe(true);
    await cm.close();
    expect(await waitFor(() => !isAlive(pid!), 10_000)).toBe(true);
  });
});
