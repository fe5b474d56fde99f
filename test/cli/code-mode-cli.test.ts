// Code mode from the command line and over stdio: `sandgate tools`, `exec` and `doctor` with
// upstream servers configured, secrets masked, and `sandgate stdio` leaving no upstream behind.

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import { descendantPids, waitFor } from "../helpers.js";
import { connectStdio, runCli, startServe, type CliResult } from "../fixtures/cli.js";

const MEMORY = resolve(import.meta.dirname, "..", "..", "node_modules/@modelcontextprotocol/server-memory/dist/index.js");
const SECRET = "sg-cli-canary-93e1f0a2";
const dir = mkdtempSync(join(tmpdir(), "sandgate-cm-cli-"));
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const configPath = join(dir, "sandgate.json");
writeFileSync(
  configPath,
  JSON.stringify({
    mcpServers: {
      memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl"), API_TOKEN: SECRET }, autoApprove: [] },
      broken: { command: "/nonexistent/mcp-server", args: [] },
      remote: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: `Bearer ${SECRET}` }, disabled: true },
    },
  }),
);

function sandgate(args: string[], input = ""): Promise<CliResult> {
  return runCli(args, { input, env: { SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20", SANDGATE_CONFIG: configPath } });
}

describe("sandgate tools", () => {
  it("lists every server with its state and tools, and fails when one is down", async () => {
    const r = await sandgate(["tools"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^memory \(stdio\): ready, 9 tools$/m);
    expect(r.stdout).toContain("  memory.read_graph");
    expect(r.stdout).toMatch(/^broken \(stdio\): failed, 0 tools\n {2}error: .*ENOENT/m);
    expect(r.stdout).toMatch(/^remote \(streamable-http\): disabled/m);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it("--server lists that server alone, and a name nobody configured is an error, not an empty list", async () => {
    const one = await sandgate(["tools", "--server", "memory"]);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^memory \(stdio\): ready, 9 tools\n/);
    expect(one.stdout).not.toContain("broken");
    for (const json of [[], ["--json"]]) {
      const typo = await sandgate(["tools", "--server", "memry", ...json]);
      expect(typo).toMatchObject({ code: 2, stdout: "" });
      expect(typo.stderr).toContain("no upstream server `memry` is configured (servers: memory, broken, remote)");
    }
  });

  it("searches the catalog and prints generated files", async () => {
    const found = await sandgate(["tools", "--search", "knowledge graph entities", "--detail", "name", "--limit", "3"]);
    expect(found.code).toBe(0);
    expect(found.stdout.trim().split("\n").every((line) => line.startsWith("memory."))).toBe(true);
    const shown = await sandgate(["tools", "--show", "servers/memory/index.ts"]);
    expect(shown.stdout).toMatch(/export \{ readGraph/);
    const bad = await sandgate(["tools", "--search", "x", "--detail", "everything"]);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining("--detail must be one of name, summary, full") });
  });

  it("config --print masks upstream env and header values", async () => {
    const r = await sandgate(["config", "--print"]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(SECRET);
    const config = JSON.parse(r.stdout) as { mcpServers: { memory: { env: Record<string, string> }; remote: { headers: Record<string, string> } } };
    expect(config.mcpServers.memory.env.API_TOKEN).toBe("********");
    expect(config.mcpServers.remote.headers.Authorization).toBe("********");
  });
});

describe("sandgate exec and doctor with upstream servers", () => {
  it("exec runs code that calls an upstream tool", async () => {
    const r = await sandgate(["exec", "-l", "python", "from servers.memory import read_graph\ng = await read_graph()\nprint(sorted(g))"]);
    expect(r).toMatchObject({ code: 0, stdout: "['entities', 'relations']\n" });
  });

  it("doctor reports each upstream server without failing isolation", async () => {
    const r = await sandgate(["doctor", "--json"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { checks: { name: string; ok: boolean; detail: string }[] };
    expect(report.checks.find((c) => c.name === "upstream memory")).toMatchObject({ ok: true, detail: "stdio, 9 tools" });
    expect(report.checks.find((c) => c.name === "upstream broken")).toMatchObject({ ok: false });
    expect(r.stdout).not.toContain(SECRET);
  }, 60_000);
});

describe("sandgate stdio with upstream servers", () => {
  it("answers search_tools and runs code that calls upstream, then leaves nothing behind", async () => {
    const { client } = await connectStdio({ SANDBOX_DIR: dir, SANDGATE_CONFIG: configPath, SANDGATE_POOL: "python=1,javascript=0,bash=0" }, { name: "cm-stdio" });
    try {
      const search = (await client.callTool({ name: "search_tools", arguments: { query: "read the whole graph", limit: 1 } })) as CallToolResult;
      expect((search.structuredContent as { tools: { id: string }[] }).tools[0]?.id).toBe("memory.read_graph");
      const run = (await client.callTool({
        name: "execute_code",
        arguments: { language: "javascript", code: 'const g = await callMCPTool("memory.read_graph"); Object.keys(g).sort().join(",")' },
      })) as CallToolResult;
      expect(run.structuredContent).toMatchObject({ status: "ok", value: "entities,relations" });
      expect(descendantPids().length).toBeGreaterThan(2);
    } finally {
      await client.close();
    }
    expect(await waitFor(() => descendantPids().length === 0, 15_000)).toBe(true);
  }, 60_000);
});

describe("sandgate serve with upstream servers", () => {
  it("reports them at start and in /health, and stops them with itself", async () => {
    const serve = await startServe({ SANDBOX_DIR: dir, SANDGATE_CONFIG: configPath, SANDGATE_POOL: "python=0,javascript=0,bash=0" }, (out) => out.includes("Upstream MCP servers:"));
    expect(serve.stdout()).toContain("Upstream MCP servers: memory (9 tools), broken (failed), remote (disabled)");
    const { url } = serve;
    const health = (await (await fetch(`${url}/health`)).json()) as { status: string; upstream: { name: string; state: string }[] };
    expect(health.status).toBe("degraded");
    expect(health.upstream).toContainEqual({ name: "broken", state: "failed", tool_count: 0 });
    expect(JSON.stringify(health)).not.toContain(SECRET);
    expect(await serve.stop()).toBe(0);
    expect(await waitFor(() => descendantPids().length === 0, 10_000)).toBe(true);
  }, 60_000);
});
