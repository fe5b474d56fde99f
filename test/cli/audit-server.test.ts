// The audit trail end to end: GET /audit and /audit/verify through a real server with scoped API
// keys, file operations over REST recorded as file rows, and `sandgate serve` + `sandgate audit`
// (dist) writing, listing, exporting and verifying the log, and naming a tampered row.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/app/index.js";
import { loadConfig } from "../../src/config/index.js";
import { startHttpServer, type RunningServer } from "../../src/server/index.js";
import { auditPathOf, type AuditLog, type AuditPage } from "../../src/store/index.js";
import { runCli, startServe } from "../fixtures/cli.js";
import { createTestApp } from "../helpers.js";
import { bearer, expectError, jsonApi, serverContext, type Api } from "../server-helpers.js";

const RUNNER = "runner-key-0123456789";
const AUDITOR = "auditor-key-012345678";
const KEYS = { runner: RUNNER, auditor: AUDITOR };
const SCOPES = { runner: ["execute" as const, "files" as const, "sessions" as const], auditor: ["audit" as const] };

describe("GET /audit through a real server", () => {
  let dir: string;
  let app: App;
  let audit: AuditLog;
  let server: RunningServer;
  let api: Api;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sandgate-audit-server-"));
    const config = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" });
    app = createTestApp(config, { pool: { python: 1, javascript: 0, bash: 0 }, governed: true, audit: true });
    audit = app.audit!;
    server = await startHttpServer(serverContext(app.engine, config, { apiKeys: KEYS, keyScopes: SCOPES }));
    api = jsonApi(() => server.url);
  });
  afterAll(async () => {
    await server?.close();
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const asAuditor = <T>(path: string) => api<T>(path, { headers: bearer(AUDITOR) });

  it("records file operations over REST as file rows and serves them to a key with the audit scope", async () => {
    const base = `${server.url}/sessions/files1`;
    const put = await fetch(`${base}/files/content?path=data/raw.bin`, { method: "PUT", headers: { "content-type": "application/octet-stream", ...bearer(RUNNER) }, body: "12345" });
    expect(put.status).toBeLessThan(300);
    expect((await api("/sessions/files1/files/content", { method: "PUT", json: { path: "notes.txt", content: "hello" }, headers: bearer(RUNNER) })).status).toBe(200);
    expect((await api("/sessions/files1/files/content?path=notes.txt", { headers: { accept: "application/json", ...bearer(RUNNER) } })).status).toBe(200);
    const download = await fetch(`${base}/files/content?path=data/raw.bin`, { headers: bearer(RUNNER) });
    expect(await download.text()).toBe("12345");
    expect((await api("/sessions/files1/files?path=data", { headers: bearer(RUNNER) })).status).toBe(200);
    expectError(await api("/sessions/files1/files/content?path=missing.txt", { headers: { accept: "application/json", ...bearer(RUNNER) } }), 404, "FILE_NOT_FOUND");
    audit.flush();

    const page = await asAuditor<AuditPage>("/audit?kind=file&session=files1&order=asc");
    expect(page.status).toBe(200);
    const rows = page.body.rows.map((r) => ({ client: r.client, status: r.status, event: r.event }));
    expect(rows).toEqual([
      { client: "key:runner", status: "ok", event: expect.objectContaining({ operation: "upload", path: "data/raw.bin", bytes: 5 }) },
      { client: "key:runner", status: "ok", event: expect.objectContaining({ operation: "write", path: "notes.txt", bytes: 5 }) },
      { client: "key:runner", status: "ok", event: expect.objectContaining({ operation: "read", path: "notes.txt", bytes: 5 }) },
      { client: "key:runner", status: "ok", event: expect.objectContaining({ operation: "download", path: "data/raw.bin", bytes: 5 }) },
      { client: "key:runner", status: "ok", event: expect.objectContaining({ operation: "list", path: "data" }) },
      { client: "key:runner", status: "error", event: expect.objectContaining({ operation: "read", path: "missing.txt", error: "FILE_NOT_FOUND" }) },
    ]);
  });

  it("filters executions, pages with next_cursor, and verifies the chain", async () => {
    for (const code of ["1 + 1", "2 + 2", "3 + 3"]) {
      expect((await api("/execute", { json: { language: "python", code, session_id: "exec1" }, headers: bearer(RUNNER) })).status).toBe(200);
    }
    audit.flush();
    const executions = await asAuditor<AuditPage>("/audit?kind=execution&session=exec1&language=python&status=ok&client=key:runner&since=1h");
    expect(executions.body.rows.map((r) => r.event)).toEqual([
      expect.objectContaining({ code: "3 + 3" }),
      expect.objectContaining({ code: "2 + 2" }),
      expect.objectContaining({ code: "1 + 1" }),
    ]);
    const first = await asAuditor<AuditPage>("/audit?session=exec1&limit=2");
    expect(first.body.rows).toHaveLength(2);
    expect(first.body.next_cursor).toBe(first.body.rows[1]?.id);
    const second = await asAuditor<AuditPage>(`/audit?session=exec1&limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.rows[0]?.id).toBeLessThan(first.body.rows[1]?.id ?? 0);
    expect((await asAuditor<AuditPage>("/audit?since=2000-01-01&until=2000-01-02")).body).toEqual({ rows: [], next_cursor: null });
    expect((await asAuditor<AuditPage>("/audit?min_risk=101")).body.rows).toEqual([]);
    expect((await asAuditor("/audit/verify")).body).toMatchObject({ ok: true });
  });

  it("refuses a key without the audit scope, and bad filters", async () => {
    const refused = expectError(await api("/audit", { headers: bearer(RUNNER) }), 403, "FORBIDDEN");
    expect(refused.message).toMatch(/audit/);
    expectError(await api("/audit/verify", { headers: bearer(RUNNER) }), 403, "FORBIDDEN");
    expectError(await api("/audit"), 401, "UNAUTHORIZED");
    expectError(await asAuditor("/audit?since=yesterday"), 400, "INVALID_INPUT");
    expectError(await asAuditor("/audit?limit=5000"), 400, "INVALID_INPUT");
    expectError(await asAuditor("/audit?kind=nope"), 400, "INVALID_INPUT");
  });
});

describe("sandgate serve and sandgate audit", () => {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-audit-cli-"));
  const env = { SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20", SANDGATE_POOL: "python=0,javascript=0,bash=0" };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps what the server ran, lists, exports and verifies it, and names a tampered row", async () => {
    const serve = await startServe(env);
    try {
      for (const code of ["print('audited')", "6 * 7"]) {
        const res = await fetch(`${serve.url}/execute`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ language: "python", code }) });
        expect(res.status).toBe(200);
      }
      // The CLI reads the log while the server still has it open (WAL).
      const live = await runCli(["audit", "--kind", "execution", "--jsonl"], { env });
      expect(live.code, live.stderr).toBe(0);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    const listed = await runCli(["audit", "--since", "1h", "--kind", "execution"], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/execution.*local.*python.*ok.*print\('audited'\)/);
    const json = await runCli(["audit", "--json", "--language", "python"], { env });
    const page = JSON.parse(json.stdout) as AuditPage;
    expect(page.rows.map((r) => (r.event as { code?: string }).code)).toEqual(["6 * 7", "print('audited')"]);
    const exported = await runCli(["audit", "export"], { env });
    const lines = exported.stdout.trim().split("\n").map((line) => JSON.parse(line) as { id: number; kind: string });
    expect(lines.map((l) => l.id)).toEqual(lines.map((_, i) => i + 1));
    expect((await runCli(["audit", "verify"], { env })).stdout).toBe(`${lines.length} rows verified\n`);

    const db = new Database(auditPathOf(loadConfig(env)));
    try {
      db.prepare("UPDATE audit SET data = replace(data, 'audited', 'harmless') WHERE id = ?").run(page.rows[1]?.id);
    } finally {
      db.close();
    }
    const tampered = await runCli(["audit", "verify"], { env });
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain(`first bad row ${page.rows[1]?.id}`);
    const bad = await runCli(["audit", "--min-risk", "x"], { env });
    expect(bad.code).toBe(2);
  });
});

describe("a stuck audit log", () => {
  it("fails file operations and executions with 503 AUDIT_UNAVAILABLE instead of letting them go unrecorded", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-audit-stuck-"));
    const base = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" });
    const config = { ...base, audit: { ...base.audit, queueMax: 1, writeTimeoutS: 0.5 } };
    const app = createTestApp(config, { pool: { python: 1, javascript: 0, bash: 0 }, governed: true, audit: true });
    const audit = app.audit!;
    const server = await startHttpServer(serverContext(app.engine, config));
    const locker = new Database(auditPathOf({ sandboxDir: dir, audit: {} }));
    try {
      const api = jsonApi(() => server.url);
      expect((await api("/sessions/stuck/files/content", { method: "PUT", json: { path: "a.txt", content: "1" } })).status).toBe(200);
      locker.exec("BEGIN IMMEDIATE");
      // The queue's one place is taken by the first row of the locked log; the next waits, then fails.
      await api("/sessions/stuck/files/content", { method: "PUT", json: { path: "b.txt", content: "2" } });
      const refused = expectError(await api("/sessions/stuck/files/content", { method: "PUT", json: { path: "c.txt", content: "3" } }), 503, "AUDIT_UNAVAILABLE");
      expect(refused.message).toMatch(/audit log/);
      expectError(await api("/execute", { json: { language: "python", code: "1 + 1" } }), 503, "AUDIT_UNAVAILABLE");
      locker.exec("ROLLBACK");
      expect((await api("/sessions/stuck/files/content", { method: "PUT", json: { path: "d.txt", content: "4" } })).status).toBe(200);
      audit.flush();
      // Every accepted row is there; the refused requests left none.
      const files = audit.query({ kind: "file", order: "asc" }).rows.map((r) => (r.event as { path: string }).path);
      expect(files).toEqual(["a.txt", "b.txt", "d.txt"]);
      expect(audit.verify()).toMatchObject({ ok: true });
    } finally {
      if (locker.inTransaction) locker.exec("ROLLBACK");
      locker.close();
      await server.close();
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
