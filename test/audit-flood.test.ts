// Floods against the audit trail through a real server: bad API keys sent while another connection
// holds the log locked must neither lose their record nor crowd keyed callers out of the write queue.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/index.js";
import { Engine } from "../src/execution/index.js";
import { Governance, type AuthFailureEvent } from "../src/governance/index.js";
import { startHttpServer } from "../src/server/index.js";
import { auditPathOf } from "../src/store/index.js";
import { attachAudit, bearer, jsonApi, serverContext } from "./server-helpers.js";

const KEY = "runner-key-0123456789";

describe("a flood of bad API keys while the audit log is locked", () => {
  it("is counted into few rows, every refusal recorded, and a keyed caller's writes still go through", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-audit-flood-"));
    const base = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" });
    const config = { ...base, audit: { ...base.audit, queueMax: 20, writeTimeoutS: 1 } };
    const engine = Engine.create(config, { pool: { python: 0, javascript: 0, bash: 0 }, governance: new Governance({ config }) });
    const ctx = serverContext(engine, config, { apiKeys: { runner: KEY } });
    const audit = attachAudit(ctx, dir);
    const server = await startHttpServer(ctx);
    let closed = false;
    const locker = new Database(auditPathOf({ sandboxDir: dir, audit: {} }));
    try {
      const api = jsonApi(() => server.url);
      locker.exec("BEGIN IMMEDIATE");
      const flood = Array.from({ length: 200 }, (_, i) => api("/sessions", { headers: bearer(`wrong-key-${i}`) }));
      const keyed = api("/sessions/mine/files/content", { method: "PUT", headers: bearer(KEY), json: { path: "a.txt", content: "1" } });
      expect((await Promise.all(flood)).every((reply) => reply.status === 401)).toBe(true);
      expect((await keyed).status).toBe(200);
      locker.exec("ROLLBACK");
      await server.close();
      closed = true;
      audit.flush();
      const refusals = audit.query({ kind: "auth_failure", limit: 1000 }).rows.map((r) => r.event as AuthFailureEvent);
      expect(refusals.length).toBeLessThanOrEqual(4);
      expect(refusals.reduce((sum, e) => sum + (e.count ?? 1), 0)).toBe(200);
      expect(refusals.every((e) => e.client === "peer:127.0.0.1" && e.reason === "invalid_key")).toBe(true);
      expect(audit.query({ kind: "file" }).rows).toHaveLength(1);
      expect(audit.verify()).toMatchObject({ ok: true });
    } finally {
      if (locker.inTransaction) locker.exec("ROLLBACK");
      locker.close();
      if (!closed) await server.close();
      await engine.close();
      await audit.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
