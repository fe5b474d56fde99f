// `npm run bench -- --only peers`: sandgate side by side with other code sandboxes on this machine, in
// one run with interleaved rounds: (a) a trivial snippet, cold and warm; (b) 100 upstream tool calls in
// one program against server-everything; plus what each one blocks, tried from inside. Returns Markdown.

import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { descendants } from "../proc.mjs";
import { fmt, pct, sleep } from "../stats.mjs";
import { CALLS, connectEcho, directLoop, timed } from "./common.mjs";
import { ensurePeersInstalled } from "./install.mjs";
import { NOT_INSTALLED, renderReport } from "./report.mjs";

/** Each peer's starter, in report order; a peer whose package is missing or broken is reported, not fatal. */
async function startAll(ctx) {
  const { startSandgate } = await import("./sandgate.mjs");
  const sandgate = await startSandgate(); // the reference: failing here fails the bench
  const started = [sandgate];
  const failed = [];
  const starters = [
    ["bare bwrap", async () => (await import("./bwrap.mjs")).startBwrap(sandgate.runtime, ctx.scratch)],
    ["srt", async () => (await import("./srt.mjs")).startSrt()],
    ["UTCP code-mode", async () => (await import("./isolates.mjs")).startUtcp()],
    ["isolated-vm bare", async () => (await import("./isolates.mjs")).startIsolatedVm()],
    ["Pyodide", async () => (await import("./pyodide.mjs")).startPyodide()],
    ["workerd (miniflare)", async () => (await import("./workerd.mjs")).startWorkerd(ctx)],
  ];
  for (const [name, start] of starters) {
    try {
      started.push(await start());
      process.stderr.write(`bench: peers: ${name} started\n`);
    } catch (e) {
      failed.push({ name, why: String(e?.message ?? e).split("\n")[0].slice(0, 300) });
      process.stderr.write(`bench: peers: ${name} did not start: ${e?.message ?? e}\n`);
    }
  }
  return { started, failed };
}

/** A TCP (HTTP) listener on the host's loopback that the network probes try to reach. */
async function hostListener() {
  let connections = 0;
  const server = createServer((_req, res) => res.end("host")).on("connection", () => connections++);
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: server.address().port, connections: () => connections, close: () => new Promise((r) => server.close(r)) };
}

export async function peersBench({ quick = false, skipInstall = false } = {}) {
  const install = await ensurePeersInstalled({ skipInstall });
  const rounds = quick ? 2 : 5;
  const coldPerRound = quick ? 3 : 8;
  const warmPerRound = quick ? 5 : 20;
  const callsPerRound = quick ? 1 : 3;
  const t0 = performance.now();
  const loadStart = loadavg();
  const scratch = mkdtempSync(join(tmpdir(), "sandgate-bench-peers-scratch-"));
  const listener = await hostListener();
  const ctx = { port: String(listener.port), benchPid: String(process.pid), scratch };
  let started = [];
  let direct;
  try {
    const all = await startAll(ctx);
    started = all.started;
    direct = await connectEcho("bench-peers-direct");
    const peers = started.flatMap((s) => s.peers);
    const samples = new Map(peers.map((p) => [p, { cold: [], warm: [], loop: [], wall: [] }]));
    const directLoops = [];
    // One discarded run of everything first: first loads, JIT, sessions being created.
    for (const p of peers) {
      await p.cold();
      if (p.warm) await p.warm();
      if (p.calls) await p.calls();
    }
    for (let i = 0; i < 3; i++) await directLoop(direct); // the SDK client speeds up over its first loops
    // Rotate the order each round, so drifting host load hits every peer alike.
    const rotated = (xs, r) => [...xs.slice(r % xs.length), ...xs.slice(0, r % xs.length)];
    for (let r = 0; r < rounds; r++) {
      for (const p of rotated(peers, r)) {
        const s = samples.get(p);
        for (let i = 0; i < (p.coldPerRound ?? coldPerRound); i++) s.cold.push(await timed(p.cold));
        if (p.warm) for (let i = 0; i < warmPerRound; i++) s.warm.push(await timed(p.warm));
      }
      process.stderr.write(`bench: peers: snippet round ${r + 1}/${rounds} done\n`);
    }
    // The tool-call programs in rounds of their own, after the cold sandboxes are gone, with the direct client among them.
    await sleep(1000);
    const callers = [...peers.filter((p) => p.calls), { calls: async () => ({ loop_ms: (await directLoop(direct)).loopMs }), direct: true }];
    for (let r = 0; r < rounds * callsPerRound; r++) {
      for (const p of rotated(callers, r)) {
        let result;
        const wall = await timed(async () => (result = await p.calls()));
        if (p.direct) directLoops.push(result.loop_ms);
        else samples.get(p).wall.push(wall), samples.get(p).loop.push(result.loop_ms);
      }
    }
    process.stderr.write(`bench: peers: ${rounds * callsPerRound} tool-call rounds done\n`);
    const probes = new Map();
    for (const p of peers) {
      if (!p.probe) continue;
      const before = listener.connections();
      try {
        probes.set(p, { ...(await p.probe(ctx)), hostConnections: listener.connections() - before });
      } catch (e) {
        probes.set(p, { error: String(e?.message ?? e).slice(0, 200) });
      }
    }
    const loadEnd = loadavg();
    return async (leftBehind) =>
      renderReport({
        quick,
        install,
        failed: [...all.failed, ...NOT_INSTALLED],
        peers,
        samples,
        directLoops,
        probes,
        rounds,
        load: { start: loadStart, end: loadEnd, cpus: availableParallelism() },
        seconds: (performance.now() - t0) / 1000,
        leftBehind,
        fmt,
        pct,
        calls: CALLS,
      });
  } finally {
    await direct?.close().catch(() => {});
    for (const s of started.reverse()) await s.close().catch((e) => process.stderr.write(`bench: peers: close: ${e?.message ?? e}\n`));
    await listener.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Runs the bench, then checks that nothing it started is still running, and returns the report. */
export async function peersReport(options) {
  const render = await peersBench(options);
  let left = descendants(process.pid);
  for (let i = 0; i < 50 && left.length > 0; i++) {
    await sleep(100);
    left = descendants(process.pid);
  }
  return render(left);
}
