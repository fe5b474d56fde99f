// Issue 22's measurement: a program in a sandgate session makes 100 sequential upstream calls
// (server-everything `echo`, stdio) against a direct MCP SDK client making the same 100 calls, in the
// same process and rounds. The program times its own loop; the direct client is timed the same way.
//
//   node bench/upstream-loop.mjs [--rounds 15] [--calls 100] [--plain]
//   node bench/upstream-loop.mjs --ref /path/to/other/worktree --pairs 4 [--rounds 15]
//
// Governance and the audit log are on, as `sandgate serve` runs; --plain leaves them out (the library
// as bench/peers runs it). With --ref, this worktree and the other (each built with `npm run build`) run alternately in
// child processes, `pairs` times each, and the report compares each one's loop against its own
// direct client in the same child, so only ratios measured side by side are set against each other.

import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const HERE = resolve(import.meta.dirname, "..");
const { values: opts } = parseArgs({
  options: {
    root: { type: "string", default: HERE },
    ref: { type: "string" },
    pairs: { type: "string", default: "4" },
    rounds: { type: "string", default: "15" },
    calls: { type: "string", default: "100" },
    json: { type: "boolean", default: false },
    plain: { type: "boolean", default: false },
  },
});
const ROUNDS = Number(opts.rounds);
const CALLS = Number(opts.calls);

const SERVER = { command: process.execPath, args: [join(HERE, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"] };

const LOOP = {
  python: (n) => [
    "import json, time",
    "t0 = time.perf_counter()",
    `for i in range(${n}):`,
    '    r = await call_mcp_tool("everything.echo", {"message": f"hi {i}"})',
    `    assert r == f"Echo: hi {i}", r`,
    "print(json.dumps({'loop_ms': (time.perf_counter() - t0) * 1000}))",
  ].join("\n"),
  javascript: (n) => [
    "const t0 = performance.now();",
    `for (let i = 0; i < ${n}; i++) {`,
    '  const r = await callMCPTool("everything.echo", { message: `hi ${i}` });',
    "  if (r !== `Echo: hi ${i}`) throw new Error(`unexpected echo: ${JSON.stringify(r)}`);",
    "}",
    "console.log(JSON.stringify({ loop_ms: performance.now() - t0 }));",
  ].join("\n"),
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const best = (xs) => Math.min(...xs);

// It assembles the parts by hand rather than with createApp: it also measures builds of older commits, made before createApp existed.
/** One worktree's dist: direct client and sandgate (governance and audit on, as `sandgate serve` runs) in alternating rounds. */
async function measure(root) {
  const dist = (p) => import(pathToFileURL(join(root, "dist", p)).href);
  const { loadConfig, upstreamServerSchema } = await dist("config/index.js");
  const { Engine, warmTokenizer } = await dist("execution/index.js");
  // The library entry: the same names before and after governance and code mode moved to src/features.
  const { CodeMode, Governance } = await dist("index.js");
  const { openAuditLog } = await dist("store/index.js");
  const { silentLogger } = await dist("util/logger.js");

  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-upstream-"));
  chmodSync(dir, 0o755);
  const base = loadConfig({ ...process.env, SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "120" });
  const config = { ...base, mcpServers: { everything: upstreamServerSchema.parse(SERVER) } };
  const { plain } = opts;
  const governance = plain ? undefined : new Governance({ config });
  const audit = plain ? undefined : openAuditLog(config, silentLogger);
  if (audit) governance.events.subscribe(audit);
  const codeMode = new CodeMode(config, plain ? {} : { governance });
  let engine;
  const direct = new Client({ name: "bench-direct", version: "bench" });
  const runs = { direct: [], python: [], javascript: [] };
  // CPU of this process (the direct client, or sandgate's host side with its upstream client), µs, of each loop and of the same program making no calls.
  const cpu = { direct: [], python: [], javascript: [] };
  try {
    await codeMode.start();
    engine = Engine.create(config, { pool: { python: 0, javascript: 0, bash: 0 }, tools: codeMode, ...(governance ? { governance, ...(governance.engineHooks ? { hooks: governance.engineHooks() } : {}) } : {}) });
    await governance?.analyzer.ready();
    // As `sandgate serve` does at start: the tokenizer's tables load before the first call, not in it.
    warmTokenizer();
    await direct.connect(new StdioClientTransport({ ...SERVER, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, stderr: "ignore" }));
    const sessions = { python: engine.sessions.create().id, javascript: engine.sessions.create().id };
    const paths = {
      direct: async (n) => {
        const t0 = performance.now();
        for (let i = 0; i < n; i++) {
          const r = await direct.callTool({ name: "echo", arguments: { message: `hi ${i}` } });
          if (r.content?.[0]?.text !== `Echo: hi ${i}`) throw new Error(`direct echo: ${JSON.stringify(r)}`);
        }
        return performance.now() - t0;
      },
      ...Object.fromEntries(
        ["python", "javascript"].map((language) => [
          language,
          async (n) => {
            const result = await engine.execute({ language, sessionId: sessions[language], code: LOOP[language](n) });
            if (result.status !== "ok" || result.toolCalls.length !== n || result.toolCalls.some((c) => !c.ok)) {
              throw new Error(`${language}: ${result.status} ${JSON.stringify(result.error)} ${result.stderr} ${result.toolCalls.length} calls`);
            }
            return JSON.parse(result.stdout.trim().split("\n").at(-1)).loop_ms;
          },
        ]),
      ),
    };
    const timed = async (name, n) => {
      const before = process.cpuUsage();
      const ms = await paths[name](n);
      const used = process.cpuUsage(before);
      return { ms, cpu: used.user + used.system };
    };
    // Warm every path up (V8, the session's runner, the upstream server), then alternate the order.
    for (const name of Object.keys(paths)) for (let i = 0; i < 3; i++) await paths[name](CALLS);
    const names = Object.keys(paths);
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of r % 2 === 0 ? names : [...names].reverse()) {
        const loop = await timed(name, CALLS);
        // The same program without calls: what a run costs the host besides its calls.
        const empty = await timed(name, 0);
        runs[name].push(loop.ms);
        cpu[name].push({ loop: loop.cpu, empty: empty.cpu });
      }
    }
  } finally {
    await direct.close().catch(() => undefined);
    await engine?.close();
    await codeMode.close();
    await governance?.analyzer.close();
    await audit?.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { runs, cpu };
}

function summary({ runs, cpu }) {
  const out = {};
  for (const [name, xs] of Object.entries(runs)) {
    const perCall = (median(cpu[name].map((c) => c.loop)) - median(cpu[name].map((c) => c.empty))) / CALLS;
    out[name] = { p50: median(xs), best: best(xs), cpu: perCall };
  }
  for (const name of ["python", "javascript"]) {
    out[name].addedPerCallP50 = (out[name].p50 - out.direct.p50) / CALLS;
    out[name].addedPerCallBest = (out[name].best - out.direct.best) / CALLS;
  }
  return out;
}

const f1 = (x) => x.toFixed(1);
const f3 = (x) => x.toFixed(3);

function row(label, s) {
  return `| ${label} | ${f1(s.direct.p50)} / ${f1(s.direct.best)} | ${f1(s.python.p50)} / ${f1(s.python.best)} | ${f3(s.python.addedPerCallP50)} / ${f3(s.python.addedPerCallBest)} | ${f1(s.javascript.p50)} / ${f1(s.javascript.best)} | ${f3(s.javascript.addedPerCallP50)} / ${f3(s.javascript.addedPerCallBest)} | ${s.direct.cpu.toFixed(0)} / ${s.python.cpu.toFixed(0)} / ${s.javascript.cpu.toFixed(0)} |`;
}

const HEADER = [
  `| worktree | direct loop ms, p50 / best | Python loop ms, p50 / best | Python added ms per call, p50 / best | JavaScript loop ms, p50 / best | JavaScript added ms per call, p50 / best | bench process CPU µs per call, direct / Python / JavaScript |`,
  "|---|---|---|---|---|---|---|",
];

function child(root) {
  return new Promise((resolvePromise, reject) => {
    const p = spawn(process.execPath, [import.meta.filename, "--root", root, "--rounds", String(ROUNDS), "--calls", String(CALLS), "--json", ...(opts.plain ? ["--plain"] : [])], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.on("exit", (code) => (code === 0 ? resolvePromise(JSON.parse(out)) : reject(new Error(`child for ${root} exited ${code}`))));
  });
}

if (opts.ref) {
  const roots = { this: resolve(opts.root), ref: resolve(opts.ref) };
  const lines = [`${opts.plain ? "without" : "with"} governance and audit, ${CALLS} calls per loop, ${ROUNDS} rounds per child, load average at start ${loadavg()[0].toFixed(1)}`, "", ...HEADER];
  for (let p = 0; p < Number(opts.pairs); p++) {
    for (const name of p % 2 === 0 ? ["ref", "this"] : ["this", "ref"]) {
      const s = summary(await child(roots[name]));
      lines.push(row(`${name} (pair ${p + 1})`, s));
      process.stderr.write(`${lines.at(-1)}\n`);
    }
  }
  console.log(lines.join("\n"));
} else {
  const runs = await measure(resolve(opts.root));
  if (opts.json) console.log(JSON.stringify(runs));
  else console.log([...HEADER, row(opts.root, summary(runs))].join("\n"));
}
