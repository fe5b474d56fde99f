// Retention against a caller who fills the audit log on purpose: long programs kept once by hash
// within a daily budget, no row younger than minRetentionDays deleted for size, and every deletion
// recorded by a retention row in the chain that `audit verify` reports.

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { ExecutionEvent } from "../../src/features/governance/index.js";
import { AuditLog, openAuditReader, queryAudit, verifyAudit, type AuditLogOptions, type AuditRecord } from "../../src/store/index.js";
import type { Logger } from "../../src/util/logger.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const DAY = 86_400_000;
const MIB = 1048576;

function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-audit-retention-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, "audit", "audit.db");
}

/** What the log said, by level. */
function listeningLogger(): { log: Logger; said: Record<"warn" | "error" | "info", string[]> } {
  const said = { warn: [] as string[], error: [] as string[], info: [] as string[] };
  const at = (level: keyof typeof said) => (_obj: unknown, message?: string) => void said[level].push(message ?? "");
  return { log: { debug: () => undefined, info: at("info"), warn: at("warn"), error: at("error") }, said };
}

function open(path: string, options: Partial<AuditLogOptions> = {}): AuditLog {
  const log = new AuditLog({ path, queueMax: 10_000, writeTimeoutMs: 10_000, retentionDays: 90, maxMb: 1024, minRetentionDays: 7, ...options });
  cleanups.push(() => log.close());
  return log;
}

function run(code: string, time = Date.now(), client = "key:flooder"): ExecutionEvent {
  return { kind: "execution", time, client, language: "python", code, codeHash: "-", risk: 0, level: "low", action: "allow", findings: [], status: "ok", durationMs: 1, background: false, stdoutBytes: 0, stderrBytes: 0, tokensReturned: 0, tokensInSandbox: 0 };
}

/** A program of about 1 MiB: a comment and `1`, distinct per `i`. */
const flood = (i: number): string => `# ${String(i).padStart(8, "0")}${"#".repeat(MIB)}\n1`;

/** Every row of `kind`, oldest first, page by page (a page stops at a few MB of programs). */
function everyRow(audit: AuditLog, kind: string): AuditRecord[] {
  const rows: AuditRecord[] = [];
  let cursor: number | undefined;
  do {
    const page = audit.query({ kind, order: "asc", limit: 1000, ...(cursor !== undefined ? { cursor } : {}) });
    rows.push(...page.rows);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return rows;
}

function fileBytes(path: string): number {
  return [path, `${path}-wal`].reduce((sum, file) => {
    try {
      return sum + statSync(file).size;
    } catch {
      return sum;
    }
  }, 0);
}

describe("a caller flooding a small audit log with 1 MiB programs", () => {
  it("deletes no row younger than audit.minRetentionDays, and says so loudly instead", async () => {
    const path = tempPath();
    const { log: logger, said } = listeningLogger();
    const audit = open(path, { maxMb: 2, codeBudgetBytes: 1024 * MIB, log: logger });
    void audit.record(run("print('the row the flood is after')", Date.now(), "key:victim"));
    audit.flush();
    for (let i = 0; i < 12; i += 1) void audit.record(run(flood(i)));
    expect(audit.flush()).toBe(true);
    const rows = everyRow(audit, "execution");
    expect(rows).toHaveLength(13);
    expect(rows[0]).toMatchObject({ id: 1, client: "key:victim" });
    expect(audit.lastRetention).toMatchObject({ deleted: 0, overCap: true });
    expect(said.error.join("\n")).toMatch(/over audit\.maxMb .* younger than audit\.minRetentionDays/);
    expect(audit.verify()).toMatchObject({ ok: true, rows: 13 });
    expect(audit.verify()).not.toHaveProperty("retention");
  });

  it("keeps a program run again and again once, and gives it back whole with every row", async () => {
    const path = tempPath();
    const audit = open(path);
    void audit.record(run("print(0)"));
    audit.flush();
    const before = fileBytes(path);
    const program = flood(1);
    for (let i = 0; i < 40; i += 1) void audit.record(run(program));
    expect(audit.flush()).toBe(true);
    // 40 copies would be 40 MiB; one copy and 40 small rows are about 1 MiB.
    expect(fileBytes(path) - before).toBeLessThan(3 * MIB);
    const rows = everyRow(audit, "execution").map((r) => r.event as ExecutionEvent);
    expect(rows).toHaveLength(41);
    expect(rows.slice(1).every((e) => e.code === program)).toBe(true);
    expect(audit.verify()).toMatchObject({ ok: true, rows: 41 });
  });

  it("keeps 2 KiB and the hash of programs past the caller's daily budget, while another caller's programs are kept whole", async () => {
    const path = tempPath();
    const audit = open(path, { codeBudgetBytes: 3 * MIB });
    for (let i = 0; i < 6; i += 1) void audit.record(run(flood(i)));
    void audit.record(run(flood(100), Date.now(), "key:other"));
    expect(audit.flush()).toBe(true);
    const events = everyRow(audit, "execution").map((r) => r.event as ExecutionEvent & { codeStored?: string; codeBytes?: number; codeNote?: string });
    expect(events.map((e) => e.codeStored)).toEqual(["by_hash", "by_hash", "truncated", "truncated", "truncated", "truncated", "by_hash"]);
    expect(events[2]?.code).toBe(flood(2).slice(0, 2048));
    expect(events[2]).toMatchObject({ codeBytes: Buffer.byteLength(flood(2)), codeNote: expect.stringMatching(/^truncated: the first 2048 characters of \d+ bytes/) });
    expect(events[6]?.code).toBe(flood(100));
    expect(fileBytes(path)).toBeLessThan(6 * MIB);
  });
});

describe("retention that does delete", () => {
  it("records each deletion as a chained retention row, warns when size made it run early, and verify reports it", async () => {
    const path = tempPath();
    const old = Date.now() - 10 * DAY;
    const first = open(path, { maxMb: 1024 });
    for (let i = 0; i < 5; i += 1) void first.record(run(flood(i), old));
    void first.record(run("print('young')"));
    first.flush();
    await first.close();
    // Reopened with a cap the old rows exceed: retention runs at start.
    const { log: logger, said } = listeningLogger();
    const audit = open(path, { maxMb: 2, log: logger });
    const report = audit.lastRetention;
    expect(report?.deleted).toBeGreaterThan(0);
    expect(report?.early).toBe(report?.deleted);
    expect(said.warn.join("\n")).toMatch(/audit retention ran early/);
    const kept = [...everyRow(audit, "execution"), ...everyRow(audit, "retention")];
    expect(kept.some((r) => r.kind === "execution" && (r.event as ExecutionEvent).code === "print('young')")).toBe(true);
    const retention = kept.filter((r) => r.kind === "retention");
    expect(retention.length).toBeGreaterThan(0);
    expect(retention[0]?.event).toMatchObject({ kind: "retention", reason: "size", fromId: 1, previousAnchorId: 0, previousAnchorHash: "0".repeat(64) });
    expect(audit.query({ kind: "retention" }).rows).toHaveLength(retention.length);
    const verified = audit.verify();
    expect(verified).toMatchObject({ ok: true, retention: { events: retention.length, deleted: report?.deleted, early: report?.deleted, last: { reason: "size" } } });
    // Programs of deleted rows are gone too.
    const db = new Database(path, { readonly: true });
    try {
      const stored = (db.prepare("SELECT count(*) AS n FROM audit_code").get() as { n: number }).n;
      const byHash = kept.filter((r) => r.kind === "execution" && (r.event as { codeStored?: string }).codeStored === "by_hash").length;
      expect(stored).toBe(byHash);
    } finally {
      db.close();
    }
  });
});

describe("audit verify against deletions outside retention", () => {
  async function filled(): Promise<string> {
    const path = tempPath();
    const audit = open(path);
    for (let i = 0; i < 5; i += 1) void audit.record(run(i === 2 ? flood(i) : `print(${i})`));
    audit.flush();
    await audit.close();
    return path;
  }

  it("fails when the oldest rows were deleted and the anchor moved by hand, which used to verify", async () => {
    const path = await filled();
    const db = new Database(path);
    try {
      const two = db.prepare("SELECT hash FROM audit WHERE id = 2").get() as { hash: string };
      db.exec("DELETE FROM audit WHERE id <= 2");
      db.prepare("INSERT INTO audit_meta (key, value) VALUES ('anchor_id', '2') ON CONFLICT(key) DO UPDATE SET value = excluded.value").run();
      db.prepare("INSERT INTO audit_meta (key, value) VALUES ('anchor_hash', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(two.hash);
      expect(verifyAudit(db)).toMatchObject({ ok: false, reason: expect.stringMatching(/without a retention row/) });
    } finally {
      db.close();
    }
  });

  it("fails when a program kept by hash was edited or deleted", async () => {
    const path = await filled();
    const db = new Database(path);
    try {
      expect(verifyAudit(db)).toMatchObject({ ok: true, rows: 5 });
      db.exec("UPDATE audit_code SET code = 'print(\"harmless\")'");
      expect(verifyAudit(db)).toMatchObject({ ok: false, reason: expect.stringMatching(/was changed/) });
      db.exec("DELETE FROM audit_code");
      expect(verifyAudit(db)).toMatchObject({ ok: false, badId: 3, reason: expect.stringMatching(/missing from audit_code/) });
    } finally {
      db.close();
    }
  });
});

describe("a log written before programs were kept apart", () => {
  it("is still read and verified by a reader that finds no audit_code table", async () => {
    const path = tempPath();
    const audit = open(path);
    void audit.record(run("print('old')"));
    audit.flush();
    await audit.close();
    const db = new Database(path);
    try {
      db.exec("DROP TABLE audit_code; DROP TABLE audit_code_budget");
      const reader = openAuditReader(path);
      try {
        expect(queryAudit(reader, {}).rows.map((r) => (r.event as ExecutionEvent).code)).toEqual(["print('old')"]);
        expect(verifyAudit(reader)).toEqual({ ok: true, rows: 1 });
      } finally {
        reader.close();
      }
    } finally {
      db.close();
    }
  });
});
