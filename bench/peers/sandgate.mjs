// sandgate in the side-by-side benchmark, two ways: the library (Engine + CodeMode in-process, as
// bench/code-mode.mjs runs it) and over MCP Streamable HTTP, the way agents use it. One engine serves both.

import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { loadConfig, upstreamServerSchema } from "../../dist/config/index.js";
import { createApp } from "../../dist/app/index.js";
import { startHttpServer } from "../../dist/server/index.js";
import { silentLogger } from "../../dist/util/logger.js";
import { CALLS, ECHO_SERVER, ROOT, expectTwo, lastJson, memoryAttempt, pythonProbe } from "./common.mjs";

const TRIVIAL = "print(1+1)";

/** The 100-call program in sandgate's Python: the loop times itself. */
export const SANDGATE_LOOP = [
  "import json, time",
  "t0 = time.perf_counter()",
  `for _ in range(${CALLS}):`,
  '    r = await call_mcp_tool("everything.echo", {"message": "hi"})',
  "loop_ms = (time.perf_counter() - t0) * 1000",
  'assert r == "Echo: hi", r',
  'print(json.dumps({"loop_ms": loop_ms}))',
].join("\n");

function check(result, what) {
  if (result.status !== "ok") throw new Error(`sandgate ${what}: ${result.status}: ${result.error?.message ?? JSON.stringify(result.error)} ${result.stderr ?? ""}`);
  return result.stdout;
}

/** Starts the engine (no warm pool: every stateless call starts a fresh sandbox), its upstream and the HTTP server. */
export async function startSandgate() {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-peers-"));
  chmodSync(dir, 0o755);
  const base = loadConfig({ ...process.env, SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "120" });
  const config = { ...base, mcpServers: { everything: upstreamServerSchema.parse(ECHO_SERVER) } };
  // Ungoverned, as the library's callers run it; no audit, no observers.
  const app = createApp(config, { log: silentLogger, version: "bench", pool: { python: 0, javascript: 0, bash: 0 }, governed: false, audit: false, observe: false });
  const { engine, codeMode, governance } = app;
  let server;
  let client;
  const close = async () => {
    // Every step runs even when one before it failed: what is left running would outlive the bench.
    const steps = [() => client?.close(), () => server?.close(), () => app.close()];
    const errors = [];
    for (const step of steps) await Promise.resolve().then(step).catch((e) => errors.push(e));
    rmSync(dir, { recursive: true, force: true });
    if (errors.length > 0) throw errors[0];
  };
  try {
    await app.start();
    const down = codeMode.status().filter((s) => s.state !== "ready");
    if (down.length > 0) throw new Error(`upstream not ready: ${JSON.stringify(down)}`);
    server = await startHttpServer({ engine, codeMode, governance, config: { ...config, server: { ...config.server, port: 0 } }, log: silentLogger, version: "bench", startedAt: app.startedAt });
    client = new Client({ name: "bench-peers", version: "bench" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  } catch (e) {
    await close();
    throw e;
  }
  const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
  const session = engine.sessions.create().id;
  const httpSession = "bench-peers-http";
  const mcp = async (args) => {
    const result = await client.callTool({ name: "execute_code", arguments: { language: "python", ...args } });
    if (result.isError) throw new Error(`execute_code: ${JSON.stringify(result).slice(0, 400)}`);
    return result.structuredContent;
  };
  const library = {
    name: "sandgate, library (Engine + CodeMode)",
    version: `sandgate ${version}`,
    limits: `cgroup memory ${config.flavors[config.defaultFlavor]?.memoryMb ?? "?"} MiB, CPU and pids per sandbox; seccomp filter; uid 65534; wall-time limit`,
    cold: async () => expectTwo(check(await engine.execute({ language: "python", code: TRIVIAL }), "cold"), "sandgate cold"),
    warm: async () => expectTwo(check(await engine.execute({ language: "python", code: TRIVIAL, sessionId: session }), "warm"), "sandgate warm"),
    calls: async () => lastJson(check(await engine.execute({ language: "python", code: SANDGATE_LOOP, sessionId: session }), "calls"), "sandgate"),
    probe: async (ctx) => {
      const run = async (code) => check(await engine.execute({ language: "python", code }), "probe");
      return { ...lastJson(await run(pythonProbe(ctx)), "sandgate probe"), memory: await memoryAttempt(run) };
    },
  };
  const http = {
    name: "sandgate, MCP over HTTP (`execute_code`)",
    version: `sandgate ${version}`,
    cold: async () => expectTwo(check(await mcp({ code: TRIVIAL }), "http cold"), "sandgate http cold"),
    warm: async () => expectTwo(check(await mcp({ code: TRIVIAL, session_id: httpSession }), "http warm"), "sandgate http warm"),
    calls: async () => lastJson(check(await mcp({ code: SANDGATE_LOOP, session_id: httpSession }), "http calls"), "sandgate http"),
  };
  return { peers: [library, http], runtime: engine.runtime, close };
}
