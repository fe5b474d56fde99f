// The event loop while one run prints 9 MB after a PII tool call: its longest stall, and how long
// another caller's trivial call and /health take meanwhile. A real server, sandbox and upstream.
// `node bench/pii-stall.mjs [dist dir] [rounds]`: a dist of another build measures that build.

import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";

// It assembles the parts by hand rather than with createApp: it also measures builds of older commits, made before createApp existed.
const DIST = resolve(process.argv[2] ?? new URL("../dist", import.meta.url).pathname);
const ROUNDS = Number(process.argv[3] ?? 5);
const { loadConfig, upstreamServerSchema } = await import(`${DIST}/config/index.js`);
const { Engine, warmTokenizer } = await import(`${DIST}/execution/index.js`);
// The library entry: the same names before and after governance and code mode moved to src/features.
const { CodeMode, Governance } = await import(`${DIST}/index.js`);
const { startHttpServer } = await import(`${DIST}/server/index.js`);
const { silentLogger } = await import(`${DIST}/util/logger.js`);

const EVERYTHING = join(process.cwd(), "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const PRINT = [
  `r = await call_mcp_tool("everything.echo", {"message": "big.print@example.com"})`,
  "import sys",
  `line = "row " + r + " " + "lorem ipsum dolor sit amet " * 2 + "\\n"`,
  "sys.stdout.write(line * (9_000_000 // len(line)))",
].join("\n");

const dir = mkdtempSync(join(tmpdir(), "sandgate-pii-stall-"));
chmodSync(dir, 0o755);
const base = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "60" });
const config = { ...base, mcpServers: { everything: upstreamServerSchema.parse({ command: process.execPath, args: [EVERYTHING, "stdio"] }) } };
const codeMode = new CodeMode(config, {});
const engine = Engine.create(config, { pool: { python: 0, javascript: 0, bash: 0 }, tools: codeMode });
await codeMode.start();
const server = await startHttpServer({
  engine, codeMode, config: { ...config, server: { ...config.server, port: 0, apiKeys: { printer: "printer-key-0123456789ab", other: "other-key-0123456789abcd" } } },
  governance: new Governance({ config }), log: silentLogger, version: "bench", startedAt: Date.now(),
});
warmTokenizer();

// Both callers in sessions started before measuring: no sandbox is spawned while measuring.
const execute = async (key, code) => {
  const request = JSON.stringify({ language: "python", code, session_id: key.split("-")[0] });
  const res = await fetch(`${server.url}/execute`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: request });
  const body = await res.json();
  if (body.status !== "ok") throw new Error(`run failed: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
};

/** One round: the big print, with a 10 ms interval probe, the loop-delay histogram and the other caller's calls. */
async function round() {
  const eld = monitorEventLoopDelay({ resolution: 5 });
  let stall = 0;
  let last = performance.now();
  const probe = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last - 10);
    last = now;
  }, 10);
  eld.enable();
  let running = true;
  let otherMs = 0;
  let others = 0;
  const other = (async () => {
    while (running) {
      const t0 = performance.now();
      await execute("other-key-0123456789abcd", "1 + 1");
      otherMs = Math.max(otherMs, performance.now() - t0);
      others++;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const t0 = performance.now();
  const body = await execute("printer-key-0123456789ab", PRINT);
  const runMs = performance.now() - t0;
  running = false;
  await other;
  eld.disable();
  clearInterval(probe);
  if (!body.stdout.includes("[EMAIL_1]")) throw new Error("the print was not tokenized");
  return { stall, eldMax: eld.max / 1e6, otherMs, others, runMs };
}

await execute("printer-key-0123456789ab", "1");
await execute("other-key-0123456789abcd", "1");
const rows = [];
for (let i = 0; i < ROUNDS; i++) rows.push(await round());
await server.close();
await engine.close();
await codeMode.close();
rmSync(dir, { recursive: true, force: true });
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f = (x) => x.toFixed(0);
console.log(`${DIST}: ${ROUNDS} rounds of a 9 MB print after a PII tool call`);
for (const r of rows) console.log(`  longest stall ${f(r.stall)} ms (loop delay max ${f(r.eldMax)}), other caller's 1+1 slowest ${f(r.otherMs)} ms of ${r.others}, run ${f(r.runMs)} ms`);
console.log(`  median: longest stall ${f(med(rows.map((r) => r.stall)))} ms, loop delay max ${f(med(rows.map((r) => r.eldMax)))} ms, other caller slowest ${f(med(rows.map((r) => r.otherMs)))} ms`);
