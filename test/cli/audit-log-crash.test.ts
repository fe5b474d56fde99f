// The audit log written by another process (the built store) that is SIGKILLed with rows still
// queued: every row it wrote survives, and the chain goes on after a restart.

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, expect, it } from "vitest";
import { GovernanceEvents } from "../../src/features/governance/index.js";
import { AuditLog } from "../../src/store/index.js";
import { built } from "../fixtures/build.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-audit-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("keeps every row written before the process was killed, and the chain goes on after restart", async () => {
  const path = join(dir, "audit", "audit.db");
  const script = `
    import { AuditLog } from ${JSON.stringify(pathToFileURL(built("store/index.js")).href)};
    const log = new AuditLog({ path: ${JSON.stringify(path)}, queueMax: 10000, writeTimeoutMs: 10000, retentionDays: 90, maxMb: 1024 });
    const event = (i) => ({ kind: "anomaly", time: Date.now(), client: "key:crash", rule: "burst", detail: "n" + i });
    for (let i = 0; i < 300; i++) log.record(event(i));
    log.flush();
    for (let i = 300; i < 310; i++) log.record(event(i));
    process.kill(process.pid, "SIGKILL");
  `;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
  expect(child.signal, child.stderr).toBe("SIGKILL");
  const log = new AuditLog({ path, queueMax: 10_000, writeTimeoutMs: 10_000, retentionDays: 90, maxMb: 1024 });
  try {
    expect(log.verify()).toEqual({ ok: true, rows: 300 });
    const fan = new GovernanceEvents();
    fan.subscribe(log);
    await fan.record({ kind: "anomaly", time: Date.now(), client: "key:after", rule: "burst", detail: "after restart" });
    expect(log.flush()).toBe(true);
    expect(log.verify()).toEqual({ ok: true, rows: 301 });
  } finally {
    await log.close();
  }
});
