// In a session machine every runner shares one memory cgroup: an OOM kill is reported only on the
// call it ended, never on a later call of another runner whose process died some other way.

import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { detectCgroups } from "../../src/sandbox/index.js";
import { useTestEngine } from "../helpers.js";

const canJoin = process.getuid?.() === 0 && existsSync("/usr/bin/nsenter") && existsSync("/usr/bin/setpriv");
const hasMemoryCgroup = detectCgroups().controllers.includes("memory");

/** Touches every page of `mb` MiB, past the 256 MiB limit: the kernel's OOM killer ends the process. */
const bomb = (mb: number): string => `b = bytearray(${mb} * 1024 * 1024)\nfor i in range(0, len(b), 4096): b[i] = 1\nlen(b)`;

describe.runIf(canJoin && hasMemoryCgroup)("out-of-memory status in a session's shared cgroup", () => {
  const fx = useTestEngine({ MAX_MEMORY_MB: "256" }, { python: 0, javascript: 0, bash: 0 });

  it("gives Python's OOM kill memory_limit, and a Bash runner killed later by the code itself is not reported as out of memory", async () => {
    const { engine } = fx;
    engine.sessions.create("oom-then-bash");
    try {
      // Both runners run in the machine before the OOM kill.
      expect(await engine.execute({ language: "bash", sessionId: "oom-then-bash", code: "echo ready" })).toMatchObject({ status: "ok" });
      const oom = await engine.execute({ language: "python", sessionId: "oom-then-bash", code: bomb(400) });
      expect(oom).toMatchObject({ status: "memory_limit", stateReset: true });

      // The shell kills itself: the runner dies by SIGKILL, but no OOM kill happened in this call.
      const killed = await engine.execute({ language: "bash", sessionId: "oom-then-bash", code: "echo before; kill -9 $$" });
      expect(killed.status).toBe("killed");
      expect(killed.error?.message).toMatch(/runner exited unexpectedly .*signal 9/);

      const after = await engine.execute({ language: "bash", sessionId: "oom-then-bash", code: "echo fine" });
      expect(after).toMatchObject({ status: "ok", stdout: "fine\n" });
    } finally {
      await engine.sessions.stop("oom-then-bash");
    }
  });

  it("gives a Python runner that exits with a status after Bash's child was OOM-killed that status, and a later Python OOM kill memory_limit", async () => {
    const { engine } = fx;
    engine.sessions.create("bash-oom-then-python");
    try {
      expect(await engine.execute({ language: "python", sessionId: "bash-oom-then-python", code: "1" })).toMatchObject({ status: "ok", value: 1 });
      // Bash's child python3 takes the OOM kill; the shell itself lives on and reports its exit status.
      const child = await engine.execute({ language: "bash", sessionId: "bash-oom-then-python", code: `cat > /tmp/bomb.py <<'PY'\n${bomb(400)}\nPY\npython3 /tmp/bomb.py; echo "status $?"` });
      expect(child.stdout).toMatch(/status 137\n$/);

      const exited = await engine.execute({ language: "python", sessionId: "bash-oom-then-python", code: "import os\nos._exit(3)" });
      expect(exited).toMatchObject({ status: "error", exitCode: 3 });
      expect(exited.error?.message).toContain("exit status 3");

      expect(await engine.execute({ language: "python", sessionId: "bash-oom-then-python", code: bomb(400) })).toMatchObject({ status: "memory_limit" });
    } finally {
      await engine.sessions.stop("bash-oom-then-python");
    }
  });
});
