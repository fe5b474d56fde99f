// The audit part of `npm run bench`: what recording an execution event in the audit log costs
// (SQLite, WAL, hash chain): the caller's record() alone, and record + flush per row when every
// execution is written in a transaction of its own (a quiet server) or in batches (a busy one);
// then how fast `audit verify` walks the chain.

import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { GovernanceEvents } from "../dist/features/governance/index.js";
import { AuditLog } from "../dist/store/index.js";
import { fmt, pct } from "./stats.mjs";

const CODE = `import json\nrows = [{"region": "eu", "amount": i} for i in range(100)]\n`.repeat(12); // about 1 KB

function executionEvent(i) {
  return {
    kind: "execution",
    client: "key:bench",
    sessionId: `s${i % 8}`,
    executionId: `e${i}`,
    language: "python",
    code: CODE,
    codeHash: createHash("sha256").update(CODE).digest("hex"),
    risk: 4,
    level: "low",
    action: "allow",
    findings: [{ ruleId: "python.open-write", category: "filesystem", severity: "info", line: 3 }],
    status: "ok",
    durationMs: 12,
    background: false,
    cpuMs: 9,
    memoryPeakBytes: 24 << 20,
    stdoutBytes: 120,
    stderrBytes: 0,
    tokensReturned: 40,
    tokensInSandbox: 40,
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

export async function auditBench({ quick = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-audit-"));
  const n = quick ? 2000 : 10000;
  const log = new AuditLog({ path: join(dir, "audit.db"), queueMax: 100_000, writeTimeoutMs: 10_000, retentionDays: 90, maxMb: 1024 });
  const events = new GovernanceEvents();
  events.subscribe(log);
  let flushMs = 0;
  let flushed = 0;
  log.onFlush((rows, ms) => {
    flushMs += ms;
    flushed += rows;
  });
  try {
    // 1. One row per transaction: each execution is recorded, then the event loop turns (the flush).
    const single = [];
    let cpu0 = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await events.record(executionEvent(i));
      await tick();
      single.push((performance.now() - t0) * 1000);
    }
    const singleFlushUs = (flushMs * 1000) / flushed;
    const singleCpu = process.cpuUsage(cpu0);
    const singleCpuUs = (singleCpu.user + singleCpu.system) / n;
    // 2. Bursts of 100 executions between two turns of the event loop: one transaction per burst.
    flushMs = 0;
    flushed = 0;
    const recordUs = [];
    const t0 = performance.now();
    cpu0 = process.cpuUsage();
    for (let i = 0; i < n; i += 100) {
      for (let j = 0; j < 100; j++) {
        const r0 = performance.now();
        await events.record(executionEvent(n + i + j));
        recordUs.push((performance.now() - r0) * 1000);
      }
      await tick();
    }
    const burstTotalUs = ((performance.now() - t0) * 1000) / n;
    const burstCpu = process.cpuUsage(cpu0);
    const burstCpuUs = (burstCpu.user + burstCpu.system) / n;
    const batchFlushUs = (flushMs * 1000) / flushed;
    // 3. Verification speed over everything written.
    const v0 = performance.now();
    const verified = log.verify();
    const verifyMs = performance.now() - v0;
    if (!verified.ok) throw new Error(`audit bench: the chain does not verify: ${verified.reason}`);
    const rowsPerS = Math.round(verified.rows / (verifyMs / 1000));
    return [
      `### Audit log (${n} execution events of about 1 KB of code each, per mode)`,
      "",
      "| what | per execution event |",
      "|---|---|",
      `| record() as the caller sees it (queue push), p50 / p90 | ${fmt(pct(recordUs, 50), 2)} / ${fmt(pct(recordUs, 90), 2)} us |`,
      `| record + its own transaction (quiet server), p50 / p90 wall | ${fmt(pct(single, 50), 1)} / ${fmt(pct(single, 90), 1)} us |`,
      `| flush alone, one row per transaction (mean) | ${fmt(singleFlushUs, 1)} us |`,
      `| flush alone, bursts of 100 rows per transaction (mean) | ${fmt(batchFlushUs, 1)} us |`,
      `| record + flush in bursts of 100 (mean wall) | ${fmt(burstTotalUs, 1)} us |`,
      `| CPU time of this process per event (user + system), one row / bursts of 100 per transaction | ${fmt(singleCpuUs, 1)} / ${fmt(burstCpuUs, 1)} us |`,
      `| verify (whole chain) | ${rowsPerS.toLocaleString("en-US")} rows/s (${verified.rows} rows in ${fmt(verifyMs, 0)} ms) |`,
      "",
      `Goal: audit cost per execution <= 0.1 ms (100 us). Wall times include waiting for the disk (checkpoints sync the file) and for a CPU on a busy host (load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores when this part ended).`,
    ].join("\n");
  } finally {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
