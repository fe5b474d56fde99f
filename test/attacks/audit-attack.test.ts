// Attacks on the audit trail: values sandboxed code chooses that must not break the hash chain,
// and a pre-planted symlink at the audit path that must not be followed.

import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, mkdtempSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig, type SandgateConfig } from "../../src/config/index.js";
import type { Engine } from "../../src/execution/index.js";
import { openAuditLog, type AuditLog } from "../../src/store/index.js";
import { createTestApp } from "../helpers.js";
import { runCli } from "../fixtures/cli.js";
import { built } from "../fixtures/build.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-audit-attack-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** An engine whose sandboxes call tools through an empty code-mode catalog, its events in an audit log. */
async function auditedEngine(dir: string, limits: Partial<SandgateConfig["audit"]> = {}): Promise<{ engine: Engine; audit: AuditLog }> {
  const base = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" });
  const config = { ...base, mcpServers: {}, audit: { ...base.audit, ...limits } };
  const app = createTestApp(config, { pool: { python: 1, javascript: 0, bash: 0 }, governed: true, upstream: true, audit: true, warmAnalyzer: false });
  cleanups.push(async () => void (await app.close()));
  await app.start();
  return { engine: app.engine, audit: app.audit! };
}

describe("the audit chain against values sandboxed code chooses", () => {
  it("still verifies after sandboxed code calls a tool whose name holds a lone surrogate", async () => {
    const { engine, audit } = await auditedEngine(tempDir());
    const code = ["try:", "    await call_mcp_tool('x\\ud800y', {})", "except Exception as e:", "    print('refused')"].join("\n");
    const result = await engine.execute({ language: "python", code });
    expect(result.stdout).toContain("refused");
    audit.flush();
    const calls = audit.query({ kind: "tool_call" }).rows;
    expect(calls).toHaveLength(1);
    expect(audit.verify()).toMatchObject({ ok: true, rows: 2 });
  });
});

describe("what the audit never stores", () => {
  it("keeps no environment value or tool argument value, even when the code prints or raises them", async () => {
    const dir = tempDir();
    const { engine, audit } = await auditedEngine(dir);
    const secret = "env-secret-value-4242";
    const argument = "argument-secret-value-9191";
    const code = [
      "import os",
      "print(os.environ['TOKEN'])",
      "try:",
      // Built at run time: the code itself (which the audit keeps) never holds the value.
      `    await call_mcp_tool('nope.tool', {'password': '${[...argument].reverse().join("")}'[::-1]})`,
      "except Exception as e:",
      "    print(e)",
      "raise RuntimeError('token is ' + os.environ['TOKEN'])",
    ].join("\n");
    const result = await engine.execute({ language: "python", code, env: { TOKEN: secret } });
    expect(result.status).toBe("error");
    audit.flush();
    // The run's error is recorded, with the value masked as it is in the result.
    const [run] = audit.query({ kind: "execution" }).rows;
    expect((run?.event as { error?: string }).error).toMatch(/token is/);
    await audit.close();
    const path = join(dir, "audit", "audit.db");
    const bytes = [path, `${path}-wal`].map((file) => { try { return readFileSync(file).toString("latin1"); } catch { return ""; } }).join("");
    expect(bytes).toContain("RuntimeError");
    expect(bytes).not.toContain(secret);
    expect(bytes).not.toContain(argument);
  });
});

describe("the audit log's size", () => {
  it("keeps every run while one caller floods a small log with 1 MB programs: past its daily budget a row keeps 2 KiB and the hash", async () => {
    const dir = tempDir();
    const { engine, audit } = await auditedEngine(dir, { maxMb: 1, codeBudgetMbPerDay: 2 });
    expect((await engine.execute({ language: "python", code: "print('before the flood')" })).stdout).toBe("before the flood\n");
    const code = `x = 1\n# ${"a".repeat(1_000_000)}\nprint(x)`;
    for (let i = 0; i < 6; i += 1) {
      const result = await engine.execute({ language: "python", code: code.replace("x = 1", `x = ${i}`) });
      expect(result.stdout.trim()).toBe(String(i));
    }
    audit.flush();
    const path = join(dir, "audit", "audit.db");
    const size = [path, `${path}-wal`].reduce((sum, file) => sum + (existsSync(file) ? statSync(file).size : 0), 0);
    // Six programs whole would be 6 MB and more; two fit the budget, the rest keep 2 KiB each.
    expect(size).toBeLessThan(5 * 1048576);
    expect(audit.verify()).toMatchObject({ ok: true });
    const runs = audit.query({ kind: "execution", order: "asc", limit: 10 }).rows.map((r) => r.event as { code: string; codeStored?: string; codeBytes?: number; codeNote?: string });
    // Nothing was deleted to make room: the run before the flood is still the first row.
    expect(runs.map((r) => r.code.slice(0, 5))).toEqual(["print", "x = 0", "x = 1", "x = 2", "x = 3", "x = 4", "x = 5"]);
    expect(runs.slice(1, 3).map((r) => [r.codeStored, r.code.length])).toEqual([["by_hash", code.length], ["by_hash", code.length]]);
    for (const run of runs.slice(3)) {
      expect(run).toMatchObject({ codeStored: "truncated", codeBytes: code.length });
      expect(run.code).toHaveLength(2048);
      expect(run.codeNote).toMatch(/codeBudgetMbPerDay/);
    }
    expect(audit.lastRetention).toMatchObject({ deleted: 0, overCap: true });
  });
});

describe("writing the audit of big programs", () => {
  it("writes a backlog of 1 MB programs a few per transaction once a lock is gone, every row kept", async () => {
    const dir = tempDir();
    const audit = openAuditLog(loadConfig({ SANDBOX_DIR: dir }));
    cleanups.push(() => audit.close());
    const batches: number[] = [];
    audit.onFlush((rows) => batches.push(rows));
    const locker = new Database(join(dir, "audit", "audit.db"));
    locker.exec("BEGIN IMMEDIATE");
    const code = "c".repeat(1_000_000);
    for (let i = 0; i < 20; i += 1) {
      void audit.record({ kind: "execution", time: Date.now(), client: "local", language: "python", code, codeHash: String(i), risk: 0, level: "low", action: "allow", findings: [], status: "ok", durationMs: 1, background: false, stdoutBytes: 0, stderrBytes: 0, tokensReturned: 0, tokensInSandbox: 0 });
    }
    expect(audit.flush()).toBe(false);
    locker.exec("ROLLBACK");
    locker.close();
    expect(audit.flush()).toBe(true);
    expect(batches.reduce((a, b) => a + b, 0)).toBe(20);
    expect(Math.max(...batches)).toBeLessThanOrEqual(8);
    expect(audit.verify()).toMatchObject({ ok: true, rows: 20 });
  });
});

describe("reading the audit of big programs", () => {
  it("pages 1 MB programs a few MB at a time however large the limit, and the cursor reaches them all", async () => {
    const { engine, audit } = await auditedEngine(tempDir());
    for (let i = 0; i < 6; i += 1) {
      const result = await engine.execute({ language: "python", code: `x = ${i}\n# ${"b".repeat(1_000_000)}\nprint(x)` });
      expect(result.status).toBe("ok");
    }
    audit.flush();
    const seen: string[] = [];
    let cursor: number | undefined;
    let pages = 0;
    do {
      const page = audit.query({ kind: "execution", limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
      expect(page.rows.length).toBeLessThanOrEqual(5);
      seen.push(...page.rows.map((r) => (r.event as { code: string }).code.slice(0, 5)));
      cursor = page.next_cursor ?? undefined;
      pages += 1;
    } while (cursor !== undefined && pages < 10);
    expect(pages).toBeGreaterThan(1);
    expect(seen).toEqual(["x = 5", "x = 4", "x = 3", "x = 2", "x = 1", "x = 0"]);
  });
});

describe("sandgate audit verify against a tampered file", () => {
  it("fails, without crashing, when the newest rows were deleted with the recorded head, or the head's table dropped", async () => {
    const dir = tempDir();
    const config = loadConfig({ SANDBOX_DIR: dir });
    const audit = openAuditLog(config);
    for (let i = 0; i < 5; i += 1) void audit.record({ kind: "anomaly", time: Date.now(), client: "local", rule: "burst", detail: `n${i}` });
    await audit.close();
    const env = { SANDBOX_DIR: dir };
    expect((await runCli(["audit", "verify"], { env })).code).toBe(0);
    const db = new Database(join(dir, "audit", "audit.db"));
    try {
      db.exec("DELETE FROM audit WHERE id > 3; DELETE FROM audit_meta WHERE key IN ('head_id', 'head_hash')");
      const cut = await runCli(["audit", "verify"], { env });
      expect(cut.code).toBe(1);
      expect(cut.stdout + cut.stderr).toMatch(/head/);
      db.exec("DROP TABLE audit_meta");
      const dropped = await runCli(["audit", "verify"], { env });
      expect(dropped.code).toBe(1);
      expect(dropped.stdout + dropped.stderr).toMatch(/audit_meta is missing/);
    } finally {
      db.close();
    }
  });
});

describe("the audit file on disk", () => {
  it.runIf(existsSync("/usr/bin/strace"))("is created owner-only, never first with the umask's mode and chmodded after", async () => {
    const dir = tempDir();
    const path = join(dir, "shared", "audit.db");
    // The built writer (dist), opened in a child traced for the system calls that create files.
    const script = `const { AuditLog } = await import(${JSON.stringify(built("store/audit-log.js"))}); await new AuditLog({ path: ${JSON.stringify(path)}, queueMax: 10, writeTimeoutMs: 1000, retentionDays: 1, maxMb: 10 }).close();`;
    const traced = spawnSync("/usr/bin/strace", ["-f", "-e", "trace=openat", process.execPath, "--input-type=module", "-e", script], { encoding: "utf8" });
    const creates = traced.stderr.split("\n").filter((line) => line.includes(`"${path}"`) && line.includes("O_CREAT"));
    expect(creates.length, traced.stderr.slice(-2000)).toBeGreaterThan(0);
    expect(creates[0]).toMatch(/O_EXCL.*, 0600\)/);
  });

  it("refuses a symbolic link planted at the log or its -wal file, leaving the file it points at untouched", () => {
    const dir = tempDir();
    const target = join(dir, "precious.txt");
    writeFileSync(target, "precious\n", { mode: 0o644 });
    const config = loadConfig({ SANDBOX_DIR: dir });
    mkdirSync(join(dir, "audit"), { mode: 0o700 });
    for (const planted of ["audit.db", "audit.db-wal"]) {
      const link = join(dir, "audit", planted);
      symlinkSync(target, link);
      try {
        expect(() => openAuditLog(config)).toThrow(/symbolic link/);
      } finally {
        rmSync(link);
      }
      expect(readFileSync(target, "utf8")).toBe("precious\n");
      expect(statSync(target).mode & 0o777).toBe(0o644);
    }
    // A dangling link would have had SQLite create the file it names.
    symlinkSync(join(dir, "created-elsewhere.db"), join(dir, "audit", "audit.db"));
    expect(() => openAuditLog(config)).toThrow(/symbolic link/);
    expect(() => lstatSync(join(dir, "created-elsewhere.db"))).toThrow();
  });

  it("keeps the log, its -wal and -shm owner-only in an owner-only directory that sandboxed code cannot read", async () => {
    const dir = tempDir();
    const { engine, audit } = await auditedEngine(dir);
    const path = join(dir, "audit", "audit.db");
    const code = [
      "import os",
      `for p in [${JSON.stringify(path)}, ${JSON.stringify(path + "-wal")}, ${JSON.stringify(join(dir, "audit"))}]:`,
      "    try:",
      "        open(p, 'rb').read(16) if not p.endswith('audit') else os.listdir(p)",
      "        print('READ', p)",
      "    except Exception as e:",
      "        print('refused', type(e).__name__)",
    ].join("\n");
    const result = await engine.execute({ language: "python", code });
    expect(result.stdout).not.toContain("READ");
    expect(result.stdout.match(/refused/g)).toHaveLength(3);
    audit.flush();
    expect(statSync(join(dir, "audit")).mode & 0o777).toBe(0o700);
    for (const file of [path, `${path}-wal`, `${path}-shm`]) expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});
