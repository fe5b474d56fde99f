// The audit log against real SQLite files in a temp dir: a row per event kind, the hash chain
// (edits and deletions are named, retention keeps it verifiable), restart, and backpressure.

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { isSandgateError } from "../../src/errors/index.js";
import { GovernanceEvents, type NewGovernanceEvent } from "../../src/features/governance/index.js";
import { applyRetention, AuditLog, exportAudit, openAuditReader, parseTimeBound, verifyAudit, type AuditLogOptions } from "../../src/store/index.js";

const dirs: string[] = [];
const logs: AuditLog[] = [];

afterEach(async () => {
  await Promise.all(logs.splice(0).map((log) => log.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-audit-"));
  dirs.push(dir);
  return join(dir, "audit", "audit.db");
}

function open(path: string, options: Partial<AuditLogOptions> = {}): AuditLog {
  const log = new AuditLog({ path, queueMax: 10_000, writeTimeoutMs: 10_000, retentionDays: 90, maxMb: 1024, ...options });
  logs.push(log);
  return log;
}

/** One event of every kind, as the gate, approvals, auth, files and anomaly rules record them. */
const EVERY_KIND: NewGovernanceEvent[] = [
  {
    kind: "execution",
    client: "key:ci",
    sessionId: "s1",
    executionId: "e1",
    language: "python",
    code: "print(1)",
    codeHash: "ab",
    risk: 12,
    level: "low",
    action: "allow",
    findings: [],
    status: "ok",
    durationMs: 30,
    background: false,
    stdoutBytes: 2,
    stderrBytes: 0,
    tokensReturned: 3,
    tokensInSandbox: 3,
  },
  { kind: "tool_call", client: "key:ci", executionId: "e1", tool: "github.create_issue", server: "github", action: "allow", outcome: "ok", argsBytes: 10, argsHash: "cd", durationMs: 5 },
  { kind: "file", client: "key:ci", sessionId: "s1", operation: "write", path: "out/a.txt", bytes: 5, outcome: "ok" },
  { kind: "approval", client: "mcp:abc", executionId: "e2", approvalId: "ap1", subject: "execution", summary: "rm -rf", decision: "denied", by: "key:admin", waitedMs: 100 },
  { kind: "auth_failure", client: "peer:127.0.0.1", reason: "missing_scope", route: "GET /audit", scope: "audit" },
  {
    kind: "policy_block",
    client: "key:ci",
    executionId: "e3",
    subject: "execution",
    language: "bash",
    risk: 95,
    findings: [{ ruleId: "bash.reverse-shell", category: "reverse-shell", severity: "critical", line: 1 }],
    reason: "reverse shell",
  },
  { kind: "anomaly", client: "key:ci", rule: "burst", detail: "60 executions in 10 s", throttledForS: 30 },
];

async function recordAll(log: AuditLog, events: NewGovernanceEvent[]): Promise<void> {
  const fan = new GovernanceEvents();
  fan.subscribe(log);
  for (const event of events) await fan.record(event);
  expect(log.flush()).toBe(true);
}

function sql(path: string): Database.Database {
  return new Database(path);
}

describe("the audit log", () => {
  it("stores a row for every event kind with its filter columns and the whole event", async () => {
    const path = tempPath();
    const log = open(path);
    await recordAll(log, EVERY_KIND);
    const rows = log.query({ order: "asc" }).rows;
    expect(rows.map((r) => r.kind)).toEqual(["execution", "tool_call", "file", "approval", "auth_failure", "policy_block", "anomaly"]);
    const [execution, tool, file, approval, auth, block, anomaly] = rows;
    expect(execution).toMatchObject({ client: "key:ci", session_id: "s1", execution_id: "e1", language: "python", status: "ok", risk: 12, action: "allow", tool: null });
    expect(execution?.event).toMatchObject({ kind: "execution", code: "print(1)", codeHash: "ab" });
    expect(tool).toMatchObject({ tool: "github.create_issue", status: "ok", action: "allow", execution_id: "e1" });
    expect(file).toMatchObject({ status: "ok", action: "write", session_id: "s1" });
    expect(file?.event).toMatchObject({ path: "out/a.txt", bytes: 5 });
    expect(approval).toMatchObject({ status: "denied", client: "mcp:abc" });
    expect(approval?.event).toMatchObject({ by: "key:admin" });
    expect(auth).toMatchObject({ status: "missing_scope", client: "peer:127.0.0.1" });
    expect(block).toMatchObject({ language: "bash", risk: 95, action: "block", status: "blocked" });
    expect(anomaly).toMatchObject({ status: "burst" });
    expect(typeof execution?.time).toBe("string");
    const db = sql(path);
    try {
      expect(verifyAudit(db)).toEqual({ ok: true, rows: 7 });
    } finally {
      db.close();
    }
  });

  it("creates its directory 0700 and its file 0600", async () => {
    const path = tempPath();
    open(path);
    expect(statSync(join(path, "..")).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("names the row whose data was edited with plain SQL", async () => {
    const path = tempPath();
    await recordAll(open(path), [...EVERY_KIND, ...EVERY_KIND]);
    const db = sql(path);
    try {
      expect(verifyAudit(db)).toEqual({ ok: true, rows: 14 });
      db.prepare("UPDATE audit SET data = replace(data, 'print(1)', 'print(2)') WHERE id = 8").run();
      const result = verifyAudit(db);
      expect(result).toMatchObject({ ok: false, badId: 8 });
      // A changed column, not only the JSON, breaks it too.
      db.prepare("UPDATE audit SET data = replace(data, 'print(2)', 'print(1)') WHERE id = 8").run();
      expect(verifyAudit(db).ok).toBe(true);
      db.prepare("UPDATE audit SET client = 'key:someone-else' WHERE id = 3").run();
      expect(verifyAudit(db)).toMatchObject({ ok: false, badId: 3 });
    } finally {
      db.close();
    }
  });

  it("names a deleted row, in the middle or at the end", async () => {
    const path = tempPath();
    await recordAll(open(path), [...EVERY_KIND, ...EVERY_KIND]);
    const db = sql(path);
    try {
      db.prepare("DELETE FROM audit WHERE id = 5").run();
      expect(verifyAudit(db)).toMatchObject({ ok: false, badId: 5 });
    } finally {
      db.close();
    }
    const tail = tempPath();
    await recordAll(open(tail), EVERY_KIND);
    const db2 = sql(tail);
    try {
      db2.prepare("DELETE FROM audit WHERE id = 7").run();
      expect(verifyAudit(db2)).toMatchObject({ ok: false, badId: 7 });
    } finally {
      db2.close();
    }
  });

  it("catches rows whose contents were swapped", async () => {
    const path = tempPath();
    await recordAll(open(path), EVERY_KIND);
    const db = sql(path);
    try {
      db.exec("UPDATE audit SET id = -1 WHERE id = 2; UPDATE audit SET id = 2 WHERE id = 3; UPDATE audit SET id = 3 WHERE id = -1");
      expect(verifyAudit(db)).toMatchObject({ ok: false, badId: 2 });
    } finally {
      db.close();
    }
  });

  it("still verifies after retention deleted the oldest rows, by age and by size", async () => {
    const path = tempPath();
    const log = open(path);
    const day = 86_400_000;
    const old = EVERY_KIND.map((event) => ({ ...event, time: Date.now() - 100 * day }));
    await recordAll(log, [...old, ...EVERY_KIND]);
    const db = sql(path);
    try {
      expect(applyRetention(db, { retentionDays: 90, maxMb: 1024, minRetentionDays: 7 })).toEqual({ deleted: 7, early: 0, overCap: false });
      // The 7 young rows and the retention row that records the deletion.
      expect(verifyAudit(db)).toMatchObject({ ok: true, rows: 8, retention: { events: 1, deleted: 7, early: 0, last: { id: 15, reason: "age", from_id: 1, to_id: 7 } } });
      expect((db.prepare("SELECT min(id) AS id FROM audit").get() as { id: number }).id).toBe(8);
    } finally {
      db.close();
    }
    // The chain goes on from the anchor: new rows after retention verify too.
    await recordAll(log, EVERY_KIND);
    const big = (i: number): NewGovernanceEvent => ({ ...EVERY_KIND[0], code: `${"x".repeat(100_000)}${i}` }) as NewGovernanceEvent;
    await recordAll(log, Array.from({ length: 30 }, (_, i) => big(i)));
    const db2 = sql(path);
    try {
      expect(verifyAudit(db2)).toMatchObject({ ok: true, rows: 45 });
      const { deleted, early } = applyRetention(db2, { retentionDays: 90, maxMb: 1, minRetentionDays: 0 });
      expect(deleted).toBeGreaterThan(0);
      expect(early).toBe(deleted);
      const left = verifyAudit(db2);
      const kept = (db2.prepare("SELECT count(*) AS n FROM audit").get() as { n: number }).n;
      expect(left).toMatchObject({ ok: true, rows: kept, retention: { early: deleted } });
      expect(statSync(path).size).toBeLessThanOrEqual(1.5 * 1048576);
    } finally {
      db2.close();
    }
  });

  it("keeps its rows across a restart, and the chain continues", async () => {
    const path = tempPath();
    const first = open(path);
    await recordAll(first, EVERY_KIND);
    // Accepted but not yet flushed: close writes it.
    await first.record({ ...EVERY_KIND[6], time: Date.now() } as never);
    await first.close();
    const second = open(path);
    expect(second.query().rows).toHaveLength(8);
    await recordAll(second, EVERY_KIND);
    expect(second.verify()).toEqual({ ok: true, rows: 15 });
    expect(second.query({ order: "asc" }).rows.map((r) => r.id)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
  });

  it("writes the events of a busy stretch (a loop of tool calls) together, and a query sees those not yet written", async () => {
    const log = open(tempPath());
    const batches: number[] = [];
    log.onFlush((rows) => batches.push(rows));
    const call = (n: number): NewGovernanceEvent => ({ kind: "tool_call", client: "key:ci", executionId: "e1", tool: `s.t${n}`, server: "s", action: "allow", outcome: "ok", argsBytes: 2, argsHash: "cd", durationMs: 1 });
    const fan = new GovernanceEvents();
    fan.subscribe(log);
    // An idle log writes the first event on the next turn of the event loop.
    await fan.record(call(0));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([1]);
    // Then fifty calls, each on a turn of its own, as sequential calls from code arrive.
    for (let n = 1; n <= 50; n++) {
      await fan.record(call(n));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(log.query({ kind: "tool_call", limit: 100, order: "asc" }).rows.map((r) => r.tool)).toEqual(Array.from({ length: 51 }, (_, n) => `s.t${n}`));
    // Far fewer transactions than events, and every row once.
    expect(batches.length).toBeLessThan(10);
    expect(batches.reduce((a, b) => a + b, 0)).toBe(51);
    expect(log.verify()).toEqual({ ok: true, rows: 51 });
  });

  it("makes record() wait while the queue is full and the file locked, then takes every row once it is free", async () => {
    const path = tempPath();
    const log = open(path, { queueMax: 5, writeTimeoutMs: 30_000 });
    const locker = sql(path);
    try {
      locker.exec("BEGIN IMMEDIATE");
      const fan = new GovernanceEvents();
      fan.subscribe(log);
      const settled: boolean[] = [];
      const pending = Array.from({ length: 12 }, (_, i) => fan.record({ ...EVERY_KIND[6], detail: `n${i}` } as NewGovernanceEvent).then(() => void settled.push(true)));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(settled.length).toBe(5);
      expect(log.backlog).toEqual({ queued: 5, waiting: 7 });
      locker.exec("COMMIT");
      await Promise.all(pending);
      expect(log.flush()).toBe(true);
      const details = log.query({ order: "asc" }).rows.map((r) => (r.event as { detail: string }).detail);
      expect(details).toEqual(Array.from({ length: 12 }, (_, i) => `n${i}`));
    } finally {
      if (locker.inTransaction) locker.exec("ROLLBACK");
      locker.close();
    }
  });

  it("rejects with AUDIT_UNAVAILABLE when no room comes in time, and never drops an accepted row", async () => {
    const path = tempPath();
    const log = open(path, { queueMax: 3, writeTimeoutMs: 300 });
    const locker = sql(path);
    let accepted = 0;
    let refused = 0;
    try {
      locker.exec("BEGIN IMMEDIATE");
      const fan = new GovernanceEvents();
      fan.subscribe(log);
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          fan.record({ ...EVERY_KIND[6], detail: `n${i}` } as NewGovernanceEvent).then(
            () => void accepted++,
            (error: unknown) => {
              expect(isSandgateError(error) && error.code).toBe("AUDIT_UNAVAILABLE");
              refused++;
            },
          ),
        ),
      );
      expect(accepted).toBe(3);
      expect(refused).toBe(5);
    } finally {
      locker.exec("ROLLBACK");
      locker.close();
    }
    await log.close();
    const db = openAuditReader(path);
    try {
      expect((db.prepare("SELECT count(*) AS n FROM audit").get() as { n: number }).n).toBe(accepted);
      expect([...exportAudit(db)].map((r) => (r.event as { detail: string }).detail)).toEqual(["n0", "n1", "n2"]);
      expect(verifyAudit(db).ok).toBe(true);
    } finally {
      db.close();
    }
  });

  it("filters and pages newest first", async () => {
    const path = tempPath();
    const log = open(path);
    await recordAll(log, [...EVERY_KIND, ...EVERY_KIND, ...EVERY_KIND]);
    expect(log.query({ kind: "execution" }).rows.map((r) => r.id)).toEqual([15, 8, 1]);
    expect(log.query({ minRisk: 50 }).rows.every((r) => r.kind === "policy_block")).toBe(true);
    expect(log.query({ tool: "github.create_issue", client: "key:ci" }).rows).toHaveLength(3);
    expect(log.query({ sessionId: "s1", language: "python", status: "ok" }).rows).toHaveLength(3);
    expect(log.query({ since: Date.now() + 60_000 }).rows).toHaveLength(0);
    const first = log.query({ limit: 8 });
    expect(first.rows.map((r) => r.id)).toEqual([21, 20, 19, 18, 17, 16, 15, 14]);
    const second = log.query({ limit: 8, cursor: first.next_cursor ?? 0 });
    const third = log.query({ limit: 8, cursor: second.next_cursor ?? 0 });
    expect(third.rows.map((r) => r.id)).toEqual([5, 4, 3, 2, 1]);
    expect(third.next_cursor).toBeNull();
  });

  it("reads relative and ISO time bounds", () => {
    const now = Date.parse("2026-01-02T00:00:00Z");
    expect(parseTimeBound("1h", "since", now)).toBe(now - 3_600_000);
    expect(parseTimeBound("7d", "since", now)).toBe(now - 7 * 86_400_000);
    expect(parseTimeBound("2026-01-01T00:00:00Z", "since", now)).toBe(now - 86_400_000);
    expect(() => parseTimeBound("yesterday", "since", now)).toThrow(/ISO 8601/);
  });
});
