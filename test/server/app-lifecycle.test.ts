// createApp's lifecycle as `sandgate serve` runs it: start and close leave no process behind, close
// stops the engine before the audit log (which keeps what the engine recorded while stopping), and a
// start that fails closes what was already made.

import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app/index.js";
import { loadConfig, upstreamServerSchema, type SandgateConfig } from "../../src/config/index.js";
import type { ExecutionEvent } from "../../src/features/governance/index.js";
import { auditPathOf, openAuditReader, queryAudit } from "../../src/store/index.js";
import { silentLogger } from "../../src/util/logger.js";
import { descendantPids, openFds, waitFor } from "../helpers.js";

const MEMORY = join(process.cwd(), "node_modules/@modelcontextprotocol/server-memory/dist/index.js");

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The production config on a throwaway SANDBOX_DIR (governance and audit on, as by default), with `env` over it. */
function configFor(env: Record<string, string> = {}, upstream = false): SandgateConfig {
  dir = mkdtempSync(join(tmpdir(), "sandgate-app-"));
  chmodSync(dir, 0o755);
  const config = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "30", ...env });
  const memory = upstreamServerSchema.parse({ command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } });
  return upstream ? { ...config, mcpServers: { memory } } : config;
}

/** Tmpfs views this process has mounted (the runtime's and code mode's tool tree). */
function ownViews(): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((line) => line.includes(`/run/sandgate/views/view-${process.pid}-`));
}

describe("createApp", () => {
  it("start spawns the warm sandboxes and the upstream servers, and close leaves none of them behind", async () => {
    const before = new Set(descendantPids());
    const app = createApp(configFor({}, true), { log: silentLogger, version: "test", pool: { python: 1, javascript: 1, bash: 0 } });
    try {
      await app.start();
      expect(app.codeMode.status()).toMatchObject([{ name: "memory", state: "ready" }]);
      expect(app.anomalies).toBeDefined();
      expect(descendantPids().filter((pid) => !before.has(pid)).length).toBeGreaterThanOrEqual(3);
    } finally {
      await expect(app.close()).resolves.toBe(true);
    }
    expect(await waitFor(() => descendantPids().every((pid) => before.has(pid)), 10_000)).toBe(true);
    // Closing again is a no-op.
    await expect(app.close()).resolves.toBe(true);
  }, 60_000);

  it("close stops a run still going before it flushes the audit log, so the log holds the run, killed", async () => {
    const config = configFor();
    const app = createApp(config, { log: silentLogger, version: "test", pool: { python: 1, javascript: 0, bash: 0 } });
    let running: Promise<unknown> | undefined;
    try {
      await app.start();
      expect(app.audit).toBeDefined();
      let printed = "";
      running = app.engine.execute({ language: "python", code: "import time\nprint('started', flush=True)\ntime.sleep(25)", onOutput: (_stream, text) => void (printed += text) });
      expect(await waitFor(() => printed.includes("started"), 15_000)).toBe(true);
    } finally {
      await app.close();
    }
    await running;
    const db = openAuditReader(auditPathOf(config));
    try {
      const runs = queryAudit(db, { kind: "execution" }).rows.map((row) => row.event as ExecutionEvent);
      expect(runs).toHaveLength(1);
      expect(runs[0]?.status).toBe("killed");
    } finally {
      db.close();
    }
  }, 60_000);

  it("when the engine cannot be made, createApp throws and closes the audit log and code mode it had opened", async () => {
    const views = ownViews().length;
    const config = configFor({ SANDGATE_BWRAP: "/nonexistent/bwrap" }, true);
    expect(() => createApp(config, { log: silentLogger })).toThrow(/bubblewrap was configured at \/nonexistent\/bwrap/);
    // The audit database was opened (it exists) and is closed again; the tool tree's tmpfs is unmounted.
    expect(readFileSync(auditPathOf(config)).length).toBeGreaterThan(0);
    expect(await waitFor(() => !openFds().some((fd) => fd.startsWith(auditPathOf(config))) && ownViews().length === views)).toBe(true);
  });
});
