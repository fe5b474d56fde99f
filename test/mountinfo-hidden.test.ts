// The mount table a sandbox reads (/proc/self/mountinfo, /proc/1/mountinfo) names no host path of
// sandgate's: SANDBOX_DIR, the runners, the session workspace, the checkout (field 4 is a mount's root).

import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useTestEngine } from "./helpers.js";

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
    expect(self).toMatch(/ \/etc\/passwd \/etc\/passwd /);
    for (const [where, text] of [["self", self ?? ""], ["pid 1", pid1 ?? ""]] as const) {
      expect(text).toContain("/workspace");
      for (const hostPath of [t.dir, resolve("runners"), process.cwd(), "/var/lib/sandgate"]) {
        expect(text.includes(hostPath), `${where} mountinfo shows ${hostPath}`).toBe(false);
      }
    }
  });

  it.runIf(loopDevices)("shows the session workspace as the root of its own filesystem", async () => {
    const session = t.engine.sessions.create("own-filesystem");
    const result = await t.engine.executeCommand({ command: "grep ' /workspace ' /proc/self/mountinfo", sessionId: session.id, timeoutS: 15 });
    expect(result.stdout.split(" ")[3]).toBe("/");
  });

  it("leaves no mount behind once the engine is closed", async () => {
    const { createTestEngine } = await import("./helpers.js");
    const other = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
    const run = await other.engine.executeCommand({ command: "true", timeoutS: 15 });
    expect(run.status).toBe("ok");
    await other.close();
    expect(existsSync(other.dir)).toBe(false);
  });
});
