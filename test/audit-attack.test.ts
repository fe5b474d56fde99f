// Attacks on the audit trail: values sandboxed code chooses that must not break the hash chain,
// and a pre-planted symlink at the audit path that must not be followed.

import { lstatSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CodeMode } from "../src/codemode/index.js";
import { loadConfig } from "../src/config/index.js";
import { Engine } from "../src/execution/index.js";
import { Governance } from "../src/governance/index.js";
import { openAuditLog, type AuditLog } from "../src/store/index.js";

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
async function auditedEngine(dir: string): Promise<{ engine: Engine; audit: AuditLog }> {
  const config = { ...loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" }), mcpServers: {} };
  const governance = new Governance({ config });
  const audit = openAuditLog(config);
  governance.events.subscribe(audit);
  const codeMode = new CodeMode(config, { governance });
  await codeMode.start();
  const engine = Engine.create(config, { pool: { python: 1, javascript: 0, bash: 0 }, tools: codeMode, governance });
  cleanups.push(() => audit.close());
  cleanups.push(() => codeMode.close());
  cleanups.push(() => engine.close());
  return { engine, audit };
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

describe("the audit file on disk", () => {
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
