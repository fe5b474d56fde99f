// The server part of `npm run bench`: `execute_code` over MCP Streamable HTTP, with the engine
// called directly in the same run as the baseline, and host processes and fds checked afterwards.

import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { loadConfig } from "../dist/config/index.js";
import { createApp } from "../dist/app/index.js";
import { startHttpServer } from "../dist/server/index.js";
import { silentLogger } from "../dist/util/logger.js";
import { descendants } from "./proc.mjs";
import { fmt, pct, sleep } from "./stats.mjs";

/** Python sandboxes kept warm for the load run; 2, 4 and 8 gave the same throughput here (see BENCHMARKS.md). */
const POOL_PYTHON = 4;
const CLIENTS = 20;
const CODE = "1+1";



/** What each open fd of this process points at (sockets, pipes, files). */
function openFds() {
  const out = new Map();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      out.set(fd, readlinkSync(`/proc/self/fd/${fd}`));
    } catch {} // the directory handle readdirSync itself used, already closed
  }
  return out;
}

const hostCounts = () => ({ procs: descendants(process.pid).length, fds: openFds() });

/** Throws unless `result` (an MCP CallToolResult or an engine result) is `1+1` evaluated. */
function checkMcp(result) {
  const s = result.structuredContent;
  if (result.isError || s?.status !== "ok" || s.value !== 2) throw new Error(`bad result: ${JSON.stringify(result).slice(0, 300)}`);
}
function checkEngine(result) {
  if (result.status !== "ok" || result.value !== 2) throw new Error(`bad result: ${JSON.stringify(result).slice(0, 300)}`);
}

async function connectClient(url, name) {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`));
  const client = new Client({ name, version: "bench" });
  await client.connect(transport);
  return { client, transport };
}

/** Ends the MCP session (DELETE) and closes the client, as a well-behaved client does. */
async function disconnect({ client, transport }) {
  await transport.terminateSession().catch(() => undefined);
  await client.close();
}

const mcpCall = (client, args) => client.callTool({ name: "execute_code", arguments: { code: CODE, language: "python", ...args } });

/** Until the pool is full and idle, so no phase starts while sandboxes from the last one start. */
async function waitPoolReady(engine) {
  for (;;) {
    const s = engine.poolState().python;
    if (s.ready >= s.target && s.starting === 0) return;
    await sleep(5);
  }
}

/** CPU ms of this process (MCP clients, server and engine alike), and host-wide busy and total jiffies. */
function cpuNow() {
  const { user, system } = process.cpuUsage();
  const host = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = host[3] + host[4];
  const total = host.reduce((a, b) => a + b, 0);
  return { selfMs: (user + system) / 1000, hostBusy: total - idle, hostTotal: total };
}

/** `callers` concurrent loops of `perCaller` calls each; a failed call is counted, not fatal. */
async function load(callers, perCaller, call) {
  const lat = [];
  const errors = [];
  const cpu0 = cpuNow();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async (_, i) => {
      for (let n = 0; n < perCaller; n++) {
        const t = performance.now();
        try {
          await call(i);
          lat.push(performance.now() - t);
        } catch (error) {
          errors.push(error instanceof Error ? error.message : String(error));
        }
      }
    }),
  );
  const wall = performance.now() - t0;
  const cpu1 = cpuNow();
  const calls = callers * perCaller;
  return {
    lat,
    errors,
    calls,
    wall,
    tput: calls / (wall / 1000),
    nodeCpuPerCall: (cpu1.selfMs - cpu0.selfMs) / calls,
    hostBusy: (cpu1.hostBusy - cpu0.hostBusy) / (cpu1.hostTotal - cpu0.hostTotal),
  };
}

/** Runs the server benchmark and returns its Markdown report. `poolPython` is for trying other sizes. */
export async function serverBench({ quick = false, poolPython = POOL_PYTHON } = {}) {
  const nLatency = quick ? 200 : 500;
  const perClient = quick ? 40 : 100;
  const half = perClient / 2;
  // libuv opens one spare fd (/dev/null, its EMFILE reserve) at the event loop's first stream
  // and keeps it: make it open before the baseline, so that only what the server keeps counts.
  await new Promise((resolve) => createServer().listen(0, "127.0.0.1", function () {
    this.close(resolve);
  }));
  const before = hostCounts();
  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-server-"));
  const config = loadConfig({ ...process.env, SANDBOX_DIR: dir, SANDGATE_MAX_CONCURRENT: "64" });
  // Ungoverned, no upstream servers (an empty catalog, nothing started), no audit and no observers.
  const app = createApp(config, { log: silentLogger, version: "bench", pool: { python: poolPython, javascript: 0, bash: 0 }, governed: false, upstream: false, audit: false, observe: false });
  const { engine, codeMode, governance } = app;
  const server = await startHttpServer({ engine, codeMode, governance, config: { ...config, server: { ...config.server, port: 0 } }, log: silentLogger, version: "bench", startedAt: app.startedAt });
  const clients = [];
  let during;
  let health;
  const lat = { server: [], engine: [], ping: [] };
  const phases = [];
  try {
    // Latency, sequential: execute_code over MCP in one session, the engine on its own session,
    // and an MCP ping (transport alone), in alternating blocks so that noise hits all three alike.
    const caller = await connectClient(server.url, "bench-latency");
    const pinger = await connectClient(server.url, "bench-ping");
    clients.push(caller, pinger);
    engine.sessions.create("bench-engine");
    await waitPoolReady(engine);
    const paths = {
      server: () => mcpCall(caller.client, { session_id: "bench-1" }).then(checkMcp),
      engine: () => engine.execute({ code: CODE, language: "python", sessionId: "bench-engine" }).then(checkEngine),
      ping: () => pinger.client.ping(),
    };
    for (let i = 0; i < 50; i++) for (const fn of Object.values(paths)) await fn();
    const block = 50;
    for (let b = 0; b < nLatency / block; b++) {
      for (const [name, fn] of Object.entries(paths)) {
        for (let i = 0; i < block; i++) {
          const t = performance.now();
          await fn();
          lat[name].push(performance.now() - t);
        }
      }
    }
    await engine.sessions.stop("bench-engine");
    process.stderr.write("bench: server latency done\n");

    // Load, stateless (warm pool): CLIENTS MCP clients, one MCP session and connection each, make
    // perClient calls each, in two halves; CLIENTS callers of engine.execute make as many calls
    // before and after (engine, server, server, engine), so drifting host load hits both alike.
    const loaders = [];
    for (let i = 0; i < CLIENTS; i++) loaders.push(await connectClient(server.url, `bench-load-${i}`));
    clients.push(...loaders);
    const run = {
      engine: () => load(CLIENTS, half, () => engine.execute({ code: CODE, language: "python" }).then(checkEngine)),
      server: () => load(CLIENTS, half, (i) => mcpCall(loaders[i].client, {}).then(checkMcp)),
    };
    for (const [kind, round] of [["engine", 1], ["server", 1], ["server", 2], ["engine", 2]]) {
      await waitPoolReady(engine);
      phases.push({ kind, round, ...(await run[kind]()) });
      process.stderr.write(`bench: server load, ${kind} ${round} done\n`);
    }
    during = hostCounts();
    for (const c of clients.splice(0)) await disconnect(c);
    health = await (await fetch(`${server.url}/health`)).json();
  } finally {
    for (const c of clients) await disconnect(c).catch(() => undefined);
    await server.close();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }

  // Sockets the server closed reach the client side a moment later: wait up to 3 s.
  let after = hostCounts();
  const t0 = performance.now();
  const extraFds = () => [...after.fds].filter(([fd, target]) => before.fds.get(fd) !== target);
  while ((after.procs > before.procs || extraFds().length > 0) && performance.now() - t0 < 3000) {
    await sleep(50);
    after = hostCounts();
  }
  const settledMs = performance.now() - t0;

  const total = (kind) => {
    const ps = phases.filter((p) => p.kind === kind);
    const calls = ps.reduce((a, p) => a + p.calls, 0);
    const wall = ps.reduce((a, p) => a + p.wall, 0);
    return {
      kind,
      round: "both",
      calls,
      wall,
      lat: ps.flatMap((p) => p.lat),
      errors: ps.flatMap((p) => p.errors),
      tput: calls / (wall / 1000),
      nodeCpuPerCall: ps.reduce((a, p) => a + p.nodeCpuPerCall * p.calls, 0) / calls,
      hostBusy: ps.reduce((a, p) => a + p.hostBusy * p.wall, 0) / wall,
    };
  };
  const srv = total("server");
  const eng = total("engine");
  const ratio = srv.tput / eng.tput;
  const errors = srv.errors.length + eng.errors.length;
  const back = after.procs <= before.procs && extraFds().length === 0;
  const row = (name, xs) => `| ${name} | ${fmt(pct(xs, 50))} | ${fmt(pct(xs, 95))} | ${fmt(pct(xs, 99))} |`;
  const phaseName = (p) => `${p.kind === "server" ? `server, ${CLIENTS} MCP clients` : `engine direct, ${CLIENTS} callers`}, ${p.round === "both" ? "**both halves**" : `half ${p.round}`}`;

  const lines = [];
  lines.push(`## Server (${new Date().toISOString().slice(0, 10)}, ${quick ? "quick" : "full"} run)`);
  lines.push("");
  lines.push(`Sequential \`execute_code\` of \`${CODE}\` (Python) in one session, ${nLatency} calls per path after 50 warm-up, ms:`);
  lines.push("");
  lines.push("| path | p50 | p95 | p99 |");
  lines.push("|---|---|---|---|");
  lines.push(row("MCP client -> Streamable HTTP -> server -> engine", lat.server));
  lines.push(row("`engine.execute` directly", lat.engine));
  lines.push(row("MCP `ping` (transport and SDKs only, no tool)", lat.ping));
  lines.push("");
  lines.push(
    `Added by the server at p50: ${fmt(pct(lat.server, 50) - pct(lat.engine, 50))} ms (a bare MCP round trip is ${fmt(pct(lat.ping, 50))} ms). ` +
      `Goal p50 <= 3 ms end to end: ${pct(lat.server, 50) <= 3 ? "met" : "missed"}.`,
  );
  lines.push("");
  lines.push(`Load: ${CLIENTS} concurrent callers, stateless \`execute_code\` of \`${CODE}\` (warm Python pool of ${poolPython}), ${half} calls per caller per half, halves in the order engine, server, server, engine:`);
  lines.push("");
  lines.push("| phase | calls | errors | p50 ms | p95 ms | p99 ms | calls/s | bench process CPU ms/call | host CPU busy |");
  lines.push("|---|---|---|---|---|---|---|---|---|");
  for (const p of [...phases, srv, eng]) {
    lines.push(
      `| ${phaseName(p)} | ${p.calls} | ${p.errors.length} | ${fmt(pct(p.lat, 50))} | ${fmt(pct(p.lat, 95))} | ${fmt(pct(p.lat, 99))} | ${p.tput.toFixed(1)} | ${p.nodeCpuPerCall.toFixed(2)} | ${Math.round(p.hostBusy * 100)}% |`,
    );
  }
  lines.push("");
  lines.push(
    `Server throughput ${srv.tput.toFixed(1)} calls/s against the engine's ${eng.tput.toFixed(1)} calls/s: ${ratio.toFixed(2)}x (goal >= 0.9x: ${ratio >= 0.9 ? "met" : "missed"}). ` +
      `Errors: ${errors} (goal 0: ${errors === 0 ? "met" : "missed"}).`,
  );
  for (const e of [...new Set([...srv.errors, ...eng.errors])].slice(0, 3)) lines.push(`- error: ${e}`);
  lines.push("");
  lines.push(
    `Host processes below the bench / open fds: before ${before.procs} / ${before.fds.size}; with the clients connected after the load ${during?.procs ?? "?"} / ${during?.fds.size ?? "?"}; ` +
      `after closing clients, server and engine ${after.procs} / ${after.fds.size}: ` +
      `${back ? `back to baseline (within ${Math.round(settledMs)} ms)` : `NOT back to baseline (new fds: ${extraFds().map(([fd, t]) => `${fd} -> ${t}`).join(", ") || "none"})`}. ` +
      `MCP sessions left on the server after the clients ended theirs: ${health?.mcp_sessions ?? "?"}.`,
  );
  return lines.join("\n");
}
