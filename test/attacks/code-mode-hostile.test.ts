// Code mode against hostile upstream servers, through the real server and real sandboxes: secrets
// in args and URLs stay masked, inferred schemas carry no injected text, wrappers run on Python 3.9.

import { existsSync, chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandgateConfig } from "../../src/config/index.js";
import { CodeMode } from "../../src/features/codemode/index.js";
import type { RunningServer } from "../../src/server/index.js";
import { startFloodServer, type FloodServer } from "../fixtures/upstream/flood-server.js";
import { recordingLogger, waitFor } from "../fixtures/upstream/helpers.js";
import { oldPythonPrelude } from "../fixtures/upstream/old-python.js";
import { runCli, type CliResult } from "../fixtures/cli.js";
import { startCodeModeStack, type CodeModeStack } from "../fixtures/code-mode-stack.js";
import { callTool, type ToolResult } from "../fixtures/mcp-client.js";

const NODE = process.execPath;
const HOSTILE = join(import.meta.dirname, "..", "fixtures", "upstream", "hostile-stdio.mjs");
/** Every canary secret contains this; nothing a caller sees may. */
const CANARY = "sgcanary";
const SECRETS = {
  flag: "sgcanary-flag-7c1d0e",
  assigned: "sgcanary-eq-55aa01",
  envArg: "sgcanary-env-91b3f2",
  github: "ghp_sgcanary0123456789abcdefABCDEF",
  password: "sgcanary-pw-3e4f",
  query: "sgcanary-query-8d9e",
  fragment: "sgcanary-frag-2b3c",
  user: "sgcanaryuser-4f5a6b",
};
const INJECTION = /Ignore (all )?previous instructions|delete_everything|tool_output/;

/** A server that answers every request with 404 and the request line, as Express's default page does. */
async function startEchoing404(): Promise<{ port: number; server: HttpServer }> {
  const server = createServer((req, res) => res.writeHead(404, { "content-type": "text/html" }).end(`<pre>Cannot ${req.method} ${req.url}</pre>`));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, server };
}

function hostileServers(port: number): Record<string, unknown> {
  return {
    hostile: { command: NODE, args: [HOSTILE, "--token", SECRETS.flag, `--api-key=${SECRETS.assigned}`, `GITHUB_TOKEN=${SECRETS.envArg}`, SECRETS.github] },
    crashy: { command: NODE, args: [HOSTILE, "--crash", "--password", SECRETS.password] },
    remote: { url: `http://127.0.0.1:${port}/mcp?api_key=${SECRETS.query}&format=json#${SECRETS.fragment}` },
    tokenuser: { url: `http://${SECRETS.user}@127.0.0.1:${port}/mcp` },
  };
}

let dir: string;
let echo: { port: number; server: HttpServer };
let flood: FloodServer;
let config: SandgateConfig;
let codeMode: CodeMode;
let server: RunningServer;
let client: Client;
let stack: CodeModeStack | undefined;
const logged = recordingLogger();

const tool = (name: string, args: Record<string, unknown> = {}): Promise<ToolResult> => callTool(client, name, args);

async function run(language: string, code: string): Promise<{ status: string; stdout: string; stderr: string; error?: { message: string } }> {
  const result = await tool("execute_code", { language, code });
  return result.structuredContent as never;
}

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: "utf8" })
    .map((p) => join(root, p))
    .filter((p) => statSync(p).isFile());
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-hostile-"));
  chmodSync(dir, 0o755);
  echo = await startEchoing404();
  flood = await startFloodServer();
  stack = await startCodeModeStack(dir, {
    servers: { ...hostileServers(echo.port), flood: { url: flood.url } },
    codeMode: { connectTimeoutS: 10, maxRestarts: 0 },
    pool: { python: 1, javascript: 0, bash: 0 },
    log: logged.log,
    name: "hostile-test",
  });
  ({ config, codeMode, server, client } = stack);
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await new Promise((resolve) => echo?.server.close(resolve));
  await flood?.close();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe("secrets in an upstream's args and URL", () => {
  it("list_servers and REST /servers show why servers failed without the secrets their args and URL carry", async () => {
    const listed = await tool("list_servers");
    const servers = listed.structuredContent.servers as { name: string; state: string; error?: string }[];
    expect(servers.find((s) => s.name === "hostile")?.state).toBe("ready");
    // Each failure quotes a secret: the crashing server prints its argv, the HTTP server echoes the
    // query in its 404 page, fetch names a URL with credentials.
    expect(servers.find((s) => s.name === "crashy")?.error).toMatch(/could not log in with .*--password \*{8}/);
    expect(servers.find((s) => s.name === "remote")?.error).toMatch(/HTTP 404.*Cannot POST \/mcp\?api_key=\*{8}/);
    expect(servers.find((s) => s.name === "tokenuser")?.state).toBe("failed");
    expect(JSON.stringify(listed)).not.toContain(CANARY);
    const rest = await (await fetch(`${server.url}/servers`)).text();
    expect(rest).toContain("crashy");
    expect(rest).not.toContain(CANARY);
  });

  it("a tool result that echoes the args reaches sandboxed code masked", async () => {
    const r = await run("python", 'print(await call_mcp_tool("hostile.whoami", {}))');
    expect(r.status, r.stderr).toBe("ok");
    expect(r.stdout).toContain("argv: --token ******** --api-key=******** GITHUB_TOKEN=******** ********");
    expect(r.stdout).not.toContain(CANARY);
  });

  it("logs never carry them", () => {
    const all = logged.lines.join("\n");
    expect(all).toContain("connecting to upstream server");
    expect(all).not.toContain(CANARY);
  });
});

describe("secrets in an upstream's args and URL, from the command line", () => {
  function sandgate(args: string[]): Promise<CliResult> {
    const configPath = join(dir, "sandgate.json");
    writeFileSync(configPath, JSON.stringify({ mcpServers: hostileServers(echo.port), codeMode: { connectTimeoutS: 10, maxRestarts: 0 } }));
    return runCli(args, { env: { SANDBOX_DIR: join(dir, "cli"), SANDGATE_CONFIG: configPath, SANDGATE_LOG_LEVEL: "debug" } });
  }

  it("config --print masks flag values, KEY=value args, tokens, URL credentials, query values and fragments", async () => {
    const r = await sandgate(["config", "--print"]);
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(CANARY);
    const printed = JSON.parse(r.stdout) as { mcpServers: Record<string, { args?: string[]; url?: string }> };
    expect(printed.mcpServers.hostile?.args).toEqual([HOSTILE, "--token", "********", "--api-key=********", "GITHUB_TOKEN=********", "********"]);
    expect(printed.mcpServers.crashy?.args).toEqual([HOSTILE, "--crash", "--password", "********"]);
    expect(printed.mcpServers.remote?.url).toBe(`http://127.0.0.1:${echo.port}/mcp?api_key=********&format=********#********`);
    expect(printed.mcpServers.tokenuser?.url).toBe(`http://127.0.0.1:${echo.port}/mcp`);
  });

  it("sandgate tools and doctor report the failed servers, with debug logs, without the secrets", async () => {
    const tools = await sandgate(["tools"]);
    expect(tools.code).toBe(1);
    expect(tools.stdout).toMatch(/^crashy \(stdio\): failed/m);
    expect(tools.stdout).toContain("--password ********");
    expect(tools.stdout).toMatch(/^remote \(streamable-http\): failed/m);
    expect(tools.stdout + tools.stderr).not.toContain(CANARY);
    const doctor = await sandgate(["doctor", "--json"]);
    expect(doctor.stdout).toContain("upstream crashy");
    expect(doctor.stdout + doctor.stderr).not.toContain(CANARY);
  }, 60_000);
});

describe("an upstream that floods its reply", () => {
  it("fails the sandbox's call naming the server and the cap, and the same code then calls other servers", async () => {
    const r = await run(
      "python",
      [
        "try:",
        '    await call_mcp_tool("flood.endless_event", {})',
        "except Exception as e:",
        "    print(type(e).__name__, e)",
        'print(await call_mcp_tool("hostile.whoami", {}))',
      ].join("\n"),
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.stdout).toMatch(/upstream server `flood` sent an SSE event larger than the 10 MiB limit/);
    expect(r.stdout).toContain("argv: --token ********");
  });
});

describe("inferred output schemas from a hostile result", () => {
  it("learn only types and plain keys: the injected text is not in search results, the tree or the kept file", async () => {
    const r = await run("python", 'r = await call_mcp_tool("hostile.report", {})\nprint(sorted(r)[:2])');
    expect(r.status, r.stderr).toBe("ok");
    expect(await waitFor(() => codeMode.catalog.resolve("hostile.report")?.outputSchemaInferred === true)).toBe(true);
    const schema = codeMode.catalog.resolve("hostile.report")!.outputSchema!;
    expect(schema).toMatchObject({ type: "object" });
    const search = await tool("search_tools", { query: "report without an output schema", detail: "full", server: "hostile" });
    expect(JSON.stringify(search)).toContain("hostile.report");
    const file = join(dir, "inferred-output-schemas.json");
    expect(await waitFor(() => existsSync(file))).toBe(true);
    const texts = [JSON.stringify(search), JSON.stringify(schema), readFileSync(file, "utf8"), ...filesUnder(codeMode.toolsDir).map((p) => readFileSync(p, "utf8"))];
    for (const text of texts) expect(text).not.toMatch(INJECTION);
  });

  it("with persistInferredSchemas off, nothing is written to or read from SANDBOX_DIR", async () => {
    const off = mkdtempSync(join(tmpdir(), "sandgate-nopersist-"));
    const kept = join(off, "inferred-output-schemas.json");
    writeFileSync(kept, JSON.stringify({ "hostile.report": { type: "string" } }));
    const cm = new CodeMode(
      { ...config, sandboxDir: off, mcpServers: { hostile: config.mcpServers.hostile! }, codeMode: { ...config.codeMode, persistInferredSchemas: false } },
      { toolsDir: join(off, "tools") },
    );
    try {
      await cm.start();
      expect(cm.catalog.resolve("hostile.report")?.outputSchema).toBeUndefined();
      const reply = await cm.beginExecution({ executionId: "test", owner: "local", sessionId: null }).onUpstreamCall({ tool: "hostile.report", args: {} }, new AbortController().signal);
      expect(reply.ok).toBe(true);
      expect(cm.catalog.resolve("hostile.report")).toMatchObject({ outputSchemaInferred: true, outputSchema: { type: "object" } });
      expect(readFileSync(kept, "utf8")).toBe(JSON.stringify({ "hostile.report": { type: "string" } }));
    } finally {
      await cm.close();
      rmSync(off, { recursive: true, force: true });
    }
  });
});

describe("generated Python wrappers on Python 3.9", () => {
  it("import and work inside the sandbox with typing as Python 3.9 has it", async () => {
    const code = [
      oldPythonPrelude("/sandgate/tools/python"),
      "from servers.hostile import typed, TypedInput",
      'r = await typed(item_id="a1", count=None, mode=2, tags=["x"])',
      'print(r["echo"], r["value"], sorted(TypedInput.__required_keys__), sorted(TypedInput.__optional_keys__))',
    ].join("\n");
    const r = await run("python", code);
    expect(r.status, `${r.stderr}${r.error?.message ?? ""}`).toBe("ok");
    expect(r.stdout.trim()).toBe("{'item-id': 'a1', 'count': None, 'mode': 2, 'tags': ['x']} 3 ['item-id'] ['count', 'mode', 'tags']");
  });
});
