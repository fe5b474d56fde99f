// `sandgate packages sync` runs installers with a time limit: at the limit the installer and what
// it started (apt-get's methods, pip's subprocesses) are killed, and the sync goes on.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runInstaller } from "../../src/cli/package-install.js";
import { waitFor } from "../helpers.js";

/** Whether the process runs (a killed one its new parent has not reaped yet counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
  } catch {
    return false;
  }
}

describe("an installer that outlives its time limit", () => {
  it("is killed with the processes it started, which no longer hold the sync until they end", async () => {
    // The background sleep (which would hold the test past its time limit) keeps the installer's stdout open after the installer itself is killed.
    const result = await runInstaller(["sh", "-c", "sleep 1000 & echo $!; wait"], { timeoutMs: 500 });
    const grandchild = Number(result.stdout.trim());
    try {
      expect(result.code).toBeNull();
      expect(result.stderr).toContain("was stopped after");
      expect(grandchild).toBeGreaterThan(0);
      // Its pipes close as it dies, which can be a moment before it has finished dying.
      expect(await waitFor(() => !alive(grandchild), 5000)).toBe(true);
    } finally {
      if (grandchild > 0 && alive(grandchild)) process.kill(grandchild, "SIGKILL");
    }
  });
});
