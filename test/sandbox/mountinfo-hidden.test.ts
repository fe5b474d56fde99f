// The mount table a sandbox reads (/proc/self/mountinfo, /proc/1/mountinfo) names no host path of
// sandgate's: SANDBOX_DIR, the runners, the tool wrappers, the session workspace, the checkout (field 4 is a mount's root).

import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, upstreamServerSchema } from "../../src/config/index.js";
import { createTestApp, createTestEngine, useTestEngine } from "../helpers.js";
import { startToyServer } from "../fixtures/upstream/toy-server.js";
import { built } from "../fixtures/build.js";

const t = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });
const asRoot = process.getuid?.() === 0;
const loopDevices = existsSync("/dev/loop-control");

describe.runIf(asRoot)("a sandbox's mount table", () => {
  it("names neither the sandbox directory nor the runners' or the workspace's host path", async () => {
    const session = t.engine.sessions.create("mountinfo");
    const result = await t.engine.executeCommand({ command: "cat /proc/self/mountinfo; echo ===; cat /proc/1/mountinfo", sessionId: session.id, timeoutS: 15 });
    expect(result.status).toBe("ok");
    const [self, pid1] = result.stdout.split("===");
    // What must be there: the runners and the synthetic /etc are still mounted, from a tmpfs root.
    expect(self).toMatch(/ \/runners \/sandgate\/runners /);
    // (/etc entry by entry, or the whole copy once it is made: host-etc-image.ts)
    expect(self).toMatch(/ \/(etc\/passwd \/etc\/passwd|etc-image-[0-9a-f]+ \/etc) /);
    for (const [where, text] of [["self", self ?? ""], ["pid 1", pid1 ?? ""]] as const) {
      expect(text).toContain("/workspace");
      for (const hostPath of [t.dir, resolve("runners"), process.cwd(), "/var/lib/sandgate"]) {
        expect(text.includes(hostPath), `${where} mountinfo shows ${hostPath}`).toBe(false);
      }
    }
  });

  it("names no host path of SANDBOX_DIR with code mode's tool wrappers mounted, though they are there to read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-tools-view-"));
    const toy = await startToyServer();
    const config = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" });
    const app = createTestApp({ ...config, mcpServers: { toy: upstreamServerSchema.parse({ url: toy.url }) } }, { pool: { python: 0, javascript: 0, bash: 0 }, upstream: true });
    const { engine, codeMode } = app;
    try {
      await app.start();
      await codeMode.catalog.settled();
      const session = engine.sessions.create("tools-view");
      const result = await engine.executeCommand({ command: "cat /proc/self/mountinfo; echo ===; ls /sandgate/tools/python/servers", sessionId: session.id, timeoutS: 15 });
      expect(result.status).toBe("ok");
      const [table, listing] = result.stdout.split("===");
      // The wrappers are mounted and readable: the toy server's package is there.
      expect(listing).toMatch(/\btoy\b/);
      expect(table).toMatch(/ \/tools \/sandgate\/tools /);
      for (const hostPath of [dir, resolve("runners"), process.cwd()]) {
        expect(table?.includes(hostPath), `mountinfo shows ${hostPath}`).toBe(false);
      }
    } finally {
      await app.close();
      await toy.close();
      rmSync(dir, { recursive: true, force: true });
    }
    // The wrappers' tmpfs goes with code mode.
    expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain(` ${dirname(codeMode.toolsDir)} `);
  });

  it.runIf(loopDevices)("shows the session workspace as the root of its own filesystem", async () => {
    const session = t.engine.sessions.create("own-filesystem");
    const result = await t.engine.executeCommand({ command: "grep ' /workspace ' /proc/self/mountinfo", sessionId: session.id, timeoutS: 15 });
    expect(result.stdout.split(" ")[3]).toBe("/");
  });

  it("leaves no mount behind once the engine is closed", async () => {
    const other = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
    const run = await other.engine.executeCommand({ command: "true", timeoutS: 15 });
    expect(run.status).toBe("ok");
    await other.close();
    expect(existsSync(other.dir)).toBe(false);
  });

  it("keeps working for one engine when another engine of the same process closes", async () => {
    const other = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
    await other.close();
    const after = await t.engine.executeCommand({ command: "cat /etc/hostname; ls /sandgate/runners | grep -c .", timeoutS: 15 });
    expect(after.status).toBe("ok");
    expect(after.stdout).toMatch(/^sandgate\n[1-9]\d*\n$/);
  });

  it("unmounts at the next start what a sandgate process that was killed left mounted", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-killed-"));
    const script = `import("${built("sandbox/index.js")}").then((m) => { m.prepareRuntime({ sandboxDir: ${JSON.stringify(dir)}, useCgroups: false }); console.log(process.pid); process.kill(process.pid, "SIGKILL"); })`;
    let pid = "";
    try {
      execFileSync(process.execPath, ["-e", script], { encoding: "utf8" });
    } catch (error) {
      pid = String((error as { stdout?: string }).stdout ?? "").trim();
    }
    expect(pid).toMatch(/^\d+$/);
    const left = `/run/sandgate/views/view-${pid}-1`;
    expect(readFileSync("/proc/self/mountinfo", "utf8")).toContain(` ${left} `);
    const next = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
    await next.close();
    expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain(` ${left} `);
    expect(existsSync(left)).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });
});
