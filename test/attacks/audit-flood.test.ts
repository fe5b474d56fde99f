// Floods against the audit trail through a real server: bad API keys sent while another connection
// holds the log locked must neither lose their record nor crowd keyed callers out of the write queue.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import type { AuthFailureEvent } from "../../src/features/governance/index.js";
import { startHttpServer } from "../../src/server/index.js";
import { auditPathOf, type AuditLog } from "../../src/store/index.js";
import { createTestApp } from "../helpers.js";
import { bearer, jsonApi, serverContext, type Api } from "../server-helpers.js";

const KEY = "runner-key-0123456789";

interface LockedAudit {
  api: Api;
  audit: AuditLog;
  /** A second connection to the log, to hold it locked with BEGIN IMMEDIATE. */
  locker: Database.Database;
  /** Closes the server (idempotent), so its last rows are queued before the test reads them. */
  stopServer: () => Promise<void>;
}

/**
 * A real server on port 0 with governance and an audit log of `queueMax` rows and `writeTimeoutS`,
 * plus a second connection to lock the log with; everything is closed and removed after `body`.
 */
async function withLockedAudit(
  options: { prefix: string; queueMax: number; writeTimeoutS: number; pool?: { python: number; javascript: number; bash: number }; apiKeys?: Record<string, string> },
  body: (fx: LockedAudit) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), options.prefix));
  const base = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" });
  const config = { ...base, audit: { ...base.audit, queueMax: options.queueMax, writeTimeoutS: options.writeTimeoutS } };
  const app = createTestApp(config, { pool: options.pool ?? { python: 0, javascript: 0, bash: 0 }, governed: true, audit: true });
  const ctx = serverContext(app.engine, config, options.apiKeys ? { apiKeys: options.apiKeys } : {});
  const audit = app.audit!;
  const server = await startHttpServer(ctx);
  let closing: Promise<void> | undefined;
  const stopServer = (): Promise<void> => (closing ??= server.close());
  const locker = new Database(auditPathOf({ sandboxDir: dir, audit: {} }));
  try {
    await body({ api: jsonApi(() => server.url), audit, locker, stopServer });
  } finally {
    if (locker.inTransaction) locker.exec("ROLLBACK");
    locker.close();
    await stopServer();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("a flood of bad API keys while the audit log is locked", () => {
  it("is counted into few rows, every refusal recorded, and a keyed caller's writes still go through", async () => {
    await withLockedAudit({ prefix: "sandgate-audit-flood-", queueMax: 20, writeTimeoutS: 1, apiKeys: { runner: KEY } }, async ({ api, audit, locker, stopServer }) => {
      locker.exec("BEGIN IMMEDIATE");
      const flood = Array.from({ length: 200 }, (_, i) => api("/sessions", { headers: bearer(`wrong-key-${i}`) }));
      const keyed = api("/sessions/mine/files/content", { method: "PUT", headers: bearer(KEY), json: { path: "a.txt", content: "1" } });
      expect((await Promise.all(flood)).every((reply) => reply.status === 401)).toBe(true);
      expect((await keyed).status).toBe(200);
      locker.exec("ROLLBACK");
      await stopServer();
      audit.flush();
      const refusals = audit.query({ kind: "auth_failure", limit: 1000 }).rows.map((r) => r.event as AuthFailureEvent);
      expect(refusals.length).toBeLessThanOrEqual(4);
      expect(refusals.reduce((sum, e) => sum + (e.count ?? 1), 0)).toBe(200);
      expect(refusals.every((e) => e.client === "peer:127.0.0.1" && e.reason === "invalid_key")).toBe(true);
      expect(audit.query({ kind: "file" }).rows).toHaveLength(1);
      expect(audit.verify()).toMatchObject({ ok: true });
    });
  });
});

describe("a refused key while the audit log cannot take rows", () => {
  it("is answered 401 after the wait, and its refusal is written, counted, once the log is free", async () => {
    await withLockedAudit({ prefix: "sandgate-audit-refusal-", queueMax: 1, writeTimeoutS: 0.3, apiKeys: { runner: KEY } }, async ({ api, audit, locker, stopServer }) => {
      locker.exec("BEGIN IMMEDIATE");
      expect((await api("/sessions/s1/files/content", { method: "PUT", headers: bearer(KEY), json: { path: "a.txt", content: "1" } })).status).toBe(200);
      expect((await api("/sessions", { headers: bearer("wrong-key") })).status).toBe(401);
      expect((await api("/sessions", { headers: bearer("wrong-key") })).status).toBe(401);
      locker.exec("ROLLBACK");
      await stopServer();
      audit.flush();
      const refusals = audit.query({ kind: "auth_failure" }).rows.map((r) => r.event as AuthFailureEvent);
      expect(refusals.reduce((sum, e) => sum + (e.count ?? 1), 0)).toBe(2);
      expect(audit.verify()).toMatchObject({ ok: true });
    });
  });
});

describe("an execution while the audit log cannot take rows", () => {
  it("is refused with 503 AUDIT_UNAVAILABLE before its code runs, and runs once the log is free", async () => {
    await withLockedAudit({ prefix: "sandgate-audit-before-run-", queueMax: 1, writeTimeoutS: 0.5, pool: { python: 1, javascript: 0, bash: 0 } }, async ({ api, audit, locker }) => {
      const run = { language: "python", session_id: "s1", code: "n = len(open('ran.txt').read()) if __import__('os').path.exists('ran.txt') else 0\nopen('ran.txt', 'w').write('x' * (n + 1))" };
      expect((await api("/sessions/s1/files/content", { method: "PUT", json: { path: "a.txt", content: "1" } })).status).toBe(200);
      const first = await api("/execute", { json: run });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      locker.exec("BEGIN IMMEDIATE");
      // The queue's one place is taken by the row of this file write; the run must not start.
      expect((await api("/sessions/s1/files/content", { method: "PUT", json: { path: "b.txt", content: "2" } })).status).toBe(200);
      const refused = await api("/execute", { json: run });
      expect(refused.status).toBe(503);
      expect((refused.body as { error: { code: string } }).error.code).toBe("AUDIT_UNAVAILABLE");
      locker.exec("ROLLBACK");
      // One run wrote one "x": the refused one never ran.
      expect((await api("/execute", { json: { ...run, code: "print(open('ran.txt').read())" } })).body).toMatchObject({ stdout: "x\n" });
      audit.flush();
      const runs = audit.query({ kind: "execution", order: "asc" }).rows;
      expect(runs).toHaveLength(2);
      expect(audit.query({ kind: "file", order: "asc" }).rows).toHaveLength(2);
      expect(audit.verify()).toMatchObject({ ok: true });
    });
  });
});
