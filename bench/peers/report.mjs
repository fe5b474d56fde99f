// The Markdown of the side-by-side benchmark: latency and tool-call tables with ratios to sandgate's
// library path (1.00x), what each peer blocked when tried from inside, and what did not install here.

/** Peers tried and left out, with why (found while building this bench on Node 20 / Debian 12). */
export const NOT_INSTALLED = [
  { name: "isolated-vm 6.x / 7.x (what @utcp/code-mode asks for)", why: "needs Node >= 22 (engines); 6.2.0 fails to compile against Node 20's V8 (`v8::SourceLocation` missing): 5.0.4 is used through an npm override" },
  { name: "miniflare 4 (current)", why: "needs Node >= 22; miniflare 3.20250718 with its workerd is used" },
  { name: "Cloudflare `@cloudflare/codemode`", why: "needs a Worker Loader binding (dynamic workers), not in miniflare 3: workerd runs the snippet as a worker module, tools through a service binding" },
  { name: "Deno (mcp-run-python's host)", why: "no Debian 12 package (apt has none); Pyodide runs in Node instead" },
];

const ratio = (a, b) => (b > 0 ? `${(a / b).toFixed(2)}x` : "-");
const cell = (v) => String(v ?? "-").replaceAll("|", "\\|").replaceAll("\n", " ");

export function renderReport(r) {
  const { fmt, pct } = r;
  const [ref] = r.peers; // sandgate, library
  const refS = r.samples.get(ref);
  const p50 = (xs) => pct(xs, 50);
  const pp = (xs) => (xs.length ? `${fmt(pct(xs, 50))} / ${fmt(pct(xs, 95))} (${xs.length})` : "-");
  const directP50 = p50(r.directLoops);
  const lines = [];
  lines.push(`## Peers side by side (issue 13)`);
  lines.push("");
  lines.push(
    `\`npm run bench -- --only peers${r.quick ? " --quick" : ""}\`, ${new Date().toISOString().slice(0, 10)}, ${r.rounds} interleaved rounds of snippets, then ${r.directLoops.length} of tool-call programs (order rotated each round), ` +
      `${r.seconds.toFixed(0)} s in all. Load average ${r.load.start.map((x) => x.toFixed(2)).join(" ")} at the start, ${r.load.end.map((x) => x.toFixed(2)).join(" ")} at the end, ${r.load.cpus} CPUs. ` +
      `Node ${process.version}. Peers' install: ${r.install}.`,
  );
  lines.push("");
  lines.push("### (a) Trivial snippet (`print(1+1)`, or `1 + 1` in JavaScript): latency ms, p50 / p95 (n)");
  lines.push("");
  lines.push("Cold: a fresh sandbox per run, as each peer is used per request. Warm: the peer's own reuse (a sandgate session, a kept Pyodide instance, a kept isolate or worker).");
  lines.push("");
  lines.push("| peer | version | cold | cold vs sandgate | warm | warm vs sandgate |");
  lines.push("|---|---|---|---|---|---|");
  for (const p of r.peers) {
    const s = r.samples.get(p);
    lines.push(`| ${p.name} | ${cell(p.version)} | ${pp(s.cold)} | ${ratio(p50(s.cold), p50(refS.cold))} | ${pp(s.warm)} | ${s.warm.length ? ratio(p50(s.warm), p50(refS.warm)) : "-"} |`);
  }
  lines.push("");
  lines.push(`### (b) ${r.calls} upstream tool calls in one program (server-everything \`echo\`, stdio)`);
  lines.push("");
  lines.push(
    `The program times its own loop of ${r.calls} sequential calls (Python \`time.perf_counter\`, JavaScript \`Date.now\`); the run's wall time adds starting the program. ` +
      `Overhead per call is (loop p50 - direct loop p50) / ${r.calls}; the direct MCP SDK client ran its loop in each of the same rounds. ` +
      "Best is the fastest loop of each: on a loaded host it is the steadier estimate of what a call costs. " +
      "sandgate, UTCP, Pyodide and workerd call through the host, which holds the one upstream connection; srt has no tool bridge, so its program starts server-everything inside the sandbox and speaks MCP stdio itself (server start-up is outside the loop, inside the wall time).",
  );
  lines.push("");
  lines.push(`| peer | loop ms, p50 / p95 (n) | loop ms, best | overhead per call ms, from p50 / from best | loop vs sandgate, p50 / best | run wall ms, p50 |`);
  lines.push("|---|---|---|---|---|---|");
  const directBest = Math.min(...r.directLoops);
  const refBest = Math.min(...refS.loop);
  lines.push(`| direct MCP SDK client (baseline) | ${pp(r.directLoops)} | ${fmt(directBest)} | - | ${ratio(directP50, p50(refS.loop))} / ${ratio(directBest, refBest)} | - |`);
  for (const p of r.peers) {
    const s = r.samples.get(p);
    if (!s.loop.length) continue;
    const best = Math.min(...s.loop);
    lines.push(
      `| ${p.name} | ${pp(s.loop)} | ${fmt(best)} | ${fmt((p50(s.loop) - directP50) / r.calls, 3)} / ${fmt((best - directBest) / r.calls, 3)} | ` +
        `${ratio(p50(s.loop), p50(refS.loop))} / ${ratio(best, refBest)} | ${fmt(p50(s.wall))} |`,
    );
  }
  lines.push("");
  lines.push("### Isolation: what each peer blocked, tried from inside");
  lines.push("");
  lines.push(
    "Each probe ran in a fresh sandbox of the peer as the bench user (root on this host): read `/etc/shadow`; open TCP to a listener on the host's 127.0.0.1 " +
      "(the last column counts connections the listener saw); look for the bench process in `/proc`; allocate 600 MB; create an AF_UNIX socket. JavaScript isolates were asked the same " +
      "through the APIs they have. Limits are the peer's configuration as run here, not tried.",
  );
  lines.push("");
  lines.push("| peer | host file | network to host | processes | 600 MB | Unix socket | host saw connections | limits (as configured) |");
  lines.push("|---|---|---|---|---|---|---|---|");
  for (const p of r.peers) {
    const x = r.probes.get(p);
    if (!x) continue;
    if (x.error) lines.push(`| ${p.name} | probe failed: ${cell(x.error)} | | | | | | ${cell(p.limits)} |`);
    else lines.push(`| ${p.name} | ${cell(x.file)} | ${cell(x.net)} | ${cell(x.procs)} | ${cell(x.memory)} | ${cell(x.unix)} | ${x.hostConnections} | ${cell(p.limits)} |`);
  }
  lines.push("");
  lines.push("Did not run here:");
  lines.push("");
  for (const f of r.failed) lines.push(`- ${f.name}: ${f.why}`);
  lines.push("");
  lines.push(`Processes left behind by the bench after it closed every peer: ${r.leftBehind.length}${r.leftBehind.length ? ` (pids ${r.leftBehind.join(", ")})` : ""}.`);
  return lines.join("\n");
}
