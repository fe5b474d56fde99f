// The governance part of `npm run bench`: what static analysis costs per KB of code in each
// language, and what the whole gate (analysis, policy, events and the SQLite audit) adds to
// an execution: the same warm session call with governance on and off, interleaved in one run.

import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../dist/config/index.js";
import { createApp } from "../dist/app/index.js";
import { Governance } from "../dist/features/governance/index.js";
import { silentLogger } from "../dist/util/logger.js";
import { fmt, pct, sleep } from "./stats.mjs";

/** One benign unit of agent-like code per language; copies with renamed identifiers make programs of any size. */
const UNITS = {
  python: (i) => `
def summarize_${i}(rows):
    totals = {}
    for row in rows:
        key = row.get("region", "unknown")
        totals[key] = totals.get(key, 0) + float(row.get("amount", 0))
    ranked = sorted(totals.items(), key=lambda kv: kv[1], reverse=True)
    return [{"region": k, "total": round(v, 2)} for k, v in ranked[:10]]

with open("/workspace/data_${i}.json", "w") as handle:
    json.dump(summarize_${i}([{"region": "eu", "amount": ${i}}]), handle)
`,
  javascript: (i) => `
function summarize${i}(rows) {
  const totals = new Map();
  for (const row of rows) {
    const key = row.region ?? "unknown";
    totals.set(key, (totals.get(key) ?? 0) + Number(row.amount ?? 0));
  }
  return [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([region, total]) => ({ region, total }));
}
const out${i} = summarize${i}([{ region: "eu", amount: ${i} }]);
console.log(JSON.stringify(out${i}));
`,
  typescript: (i) => `
interface Row${i} { region?: string; amount?: number }
function summarize${i}(rows: Row${i}[]): Array<{ region: string; total: number }> {
  const totals = new Map<string, number>();
  for (const row of rows) totals.set(row.region ?? "unknown", (totals.get(row.region ?? "unknown") ?? 0) + (row.amount ?? 0));
  return [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([region, total]) => ({ region, total }));
}
console.log(summarize${i}([{ region: "eu", amount: ${i} }]));
`,
  bash: (i) => `
count_${i}() {
  local dir="$1"
  find "$dir" -type f -name '*.csv' | while read -r file; do
    lines=$(wc -l < "$file")
    echo "$file $lines"
  done | sort -k2 -n | tail -5
}
count_${i} /workspace > /workspace/report_${i}.txt
grep -c error /workspace/log_${i}.txt || true
`,
};

function program(language, bytes) {
  let code = language === "python" ? "import json\n" : "";
  for (let i = 0; Buffer.byteLength(code) < bytes; i++) code += UNITS[language](i);
  return code;
}

async function analysisCost(governance, quick) {
  const runs = quick ? 50 : 200;
  const rows = [];
  await governance.analyzer.ready();
  for (const language of Object.keys(UNITS)) {
    for (const kb of [1, 10, 50]) {
      const code = program(language, kb * 1024);
      const actualKb = Buffer.byteLength(code) / 1024;
      for (let i = 0; i < 10; i++) governance.analyzer.analyzeLoaded(language, code);
      const times = [];
      let high = 0;
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        const analysis = governance.analyzer.analyzeLoaded(language, code);
        times.push(performance.now() - t0);
        if (i === 0) high = analysis.findings.filter((f) => f.severity === "high" || f.severity === "critical").length;
      }
      const cpu = process.cpuUsage(cpu0);
      const cpuMsPerKb = (cpu.user + cpu.system) / 1000 / runs / actualKb;
      const p50 = pct(times, 50);
      rows.push(`| ${language} | ${actualKb.toFixed(1)} | ${fmt(p50, 3)} | ${fmt(pct(times, 95), 3)} | ${fmt(p50 / actualKb, 3)} | ${fmt(cpuMsPerKb, 3)} | ${high} |`);
    }
  }
  return [
    `Static analysis, ${runs} runs per program after 10 warm-up runs (benign agent-like code of about 1, 10 and 50 KB; goal <= 1 ms p50 per KB; CPU time is the process's own, which load on the machine does not inflate):`,
    "",
    "| language | KB | p50 ms | p95 ms | p50 ms per KB | CPU ms per KB (mean) | high/critical findings |",
    "|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

async function gateCost(quick) {
  const n = quick ? 60 : 300;
  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-governance-"));
  chmodSync(dir, 0o755);
  const config = loadConfig({ SANDBOX_DIR: dir });
  const common = { log: silentLogger, version: "bench", pool: { python: 1, javascript: 0, bash: 0 }, upstream: false, observe: false };
  // On: governed with the SQLite audit log under the bench's SANDBOX_DIR, as serve runs it (start() loads the analyzer). Off: a bare engine.
  const onApp = createApp(config, { ...common, governed: true, audit: true });
  const offApp = createApp(config, { ...common, governed: false, audit: false });
  await onApp.start();
  const on = onApp.engine;
  const off = offApp.engine;
  const lines = [];
  const sessions = { on: on.sessions.create().id, off: off.sessions.create().id };
  try {
    for (const [label, language, code, stateless] of [
      ["warm session, python 0.0 KB", "python", "n = 1\nn + 1", false],
      ["warm session, python 2.2 KB", "python", program("python", 2048) + "\n1", false],
      ["stateless (pooled sandbox), python 0.0 KB", "python", "n = 1\nn + 1", true],
      ["stateless (pooled sandbox), python 2.2 KB", "python", program("python", 2048) + "\n1", true],
    ]) {
      const times = { on: [], off: [] };
      const request = (name) => ({ code, language, ...(stateless ? {} : { sessionId: sessions[name] }) });
      for (const [name, engine] of [["on", on], ["off", off]]) {
        for (let i = 0; i < 5; i++) await engine.execute(request(name));
      }
      const pairs = stateless ? Math.ceil(n / 5) : n;
      for (let i = 0; i < pairs; i++) {
        for (const [name, engine] of i % 2 === 0 ? [["on", on], ["off", off]] : [["off", off], ["on", on]]) {
          // A stateless call takes the pooled spare; give both pools time to refill so each call finds one.
          if (stateless) await sleep(250);
          const t0 = performance.now();
          const result = await engine.execute(request(name));
          times[name].push(performance.now() - t0);
          if (result.status !== "ok") throw new Error(`${language} ${name}: ${result.status} ${JSON.stringify(result.error)}`);
        }
      }
      const p50on = pct(times.on, 50);
      const p50off = pct(times.off, 50);
      lines.push(`| ${label} (${pairs} pairs) | ${fmt(p50off)} | ${fmt(p50on)} | ${(p50on / p50off).toFixed(3)} | ${fmt(pct(times.off, 90))} | ${fmt(pct(times.on, 90))} |`);
    }
  } finally {
    await Promise.all([onApp.close(), offApp.close()]);
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    `Governance on vs off: the same call on two engines, interleaved (on = analysis + policy + events + the SQLite audit, as sandgate serve runs them; goal p50 ratio <= 1.1):`,
    "",
    "| code | off p50 ms | on p50 ms | on/off | off p90 ms | on p90 ms |",
    "|---|---|---|---|---|---|",
    ...lines,
  ].join("\n");
}

export async function governanceBench({ quick = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-analysis-"));
  try {
    const governance = new Governance({ config: loadConfig({ SANDBOX_DIR: dir }) });
    return ["## Governance", "", await analysisCost(governance, quick), "", await gateCost(quick)].join("\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
