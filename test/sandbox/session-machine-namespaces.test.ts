// A session machine's runners join its namespaces through fds the host opened once, while the
// holder was known to be the holder: a reused pid cannot redirect a runner, and the fds end with it.

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SessionMachine, startSandbox } from "../../src/sandbox/index.js";
import { descendantPids, useTestEngine, waitFor } from "../helpers.js";
import { useRawRuntime } from "../fixtures/runtime.js";

const canJoin = process.getuid?.() === 0 && existsSync("/usr/bin/nsenter") && existsSync("/usr/bin/setpriv");
/** Root may choose the next pid (as checkpoint/restore tools do): the pid-reuse window made real. */
const canChoosePid = canJoin && existsSync("/proc/sys/kernel/ns_last_pid");

/** This process's open namespace files (`net:[4026532…]` and the like). */
function namespaceFds(): string[] {
  const out: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (/^(user|net|ipc|uts):\[\d+\]$/.test(target)) out.push(target);
    } catch {
      // the directory's own fd, gone
    }
  }
  return out;
}

/** The machine's holder: the one `sleep infinity` among this process's descendants. */
function holderPid(): number {
  const found = descendantPids().filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8") === "/usr/bin/sleep\0infinity\0";
    } catch {
      return false;
    }
  });
  expect(found).toHaveLength(1);
  return found[0]!;
}

/** Not yet exited (a zombie has: the tool FIFOs' mkfifo, say, which nobody reaped while this test held the event loop). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

describe.runIf(canJoin)("a session machine's namespaces", () => {
  const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

  it("are held open by the host while the session runs, and every one is closed once it ends", async () => {
    const { engine } = fx;
    const baseline = namespaceFds();
    engine.sessions.create("held");
    try {
      const run = await engine.execute({ language: "bash", sessionId: "held", code: "readlink /proc/self/ns/net" });
      expect(run.status).toBe("ok");
      // The fds the launch inherited reach no process inside (bubblewrap's init and the runner close them).
      const inside = await engine.execute({ language: "bash", sessionId: "held", code: "for f in /proc/1/fd/* /proc/$$/fd/*; do readlink \"$f\"; done | grep -cE '^(user|net|ipc|uts):' || true" });
      expect(inside.stdout).toBe("0\n");
      const held = namespaceFds().filter((link) => !baseline.includes(link));
      expect(held.map((link) => link.split(":")[0]).sort()).toEqual(["ipc", "net", "user", "uts"]);
      // The runner is in the namespace the host holds.
      expect(held).toContain(run.stdout.trim());
      // Python's runner joins the same one.
      const python = await engine.execute({ language: "python", sessionId: "held", code: "import os\nos.readlink('/proc/self/ns/net')" });
      expect(python.value).toBe(run.stdout.trim());
    } finally {
      await engine.sessions.stop("held");
    }
    expect(await waitFor(() => namespaceFds().length === baseline.length)).toBe(true);
    expect(namespaceFds()).toEqual(baseline);
  });
});

describe.runIf(canChoosePid)("a runner started after the machine's holder died", () => {
  const rt = useRawRuntime("machine-reuse");

  it("is refused before anything starts, even when the holder's pid names another process by then", async (ctx) => {
    const workspaceDir = rt.workspace("reuse");
    const machine = await SessionMachine.start(rt.runtime, rt.limits, workspaceDir);
    let impostor: ChildProcess | undefined;
    try {
      const holder = holderPid();
      process.kill(holder, "SIGKILL");
      // Synchronous from here on: the machine cannot see its bubblewrap exit, as in the window a real pid reuse needs.
      const deadline = Date.now() + 5000;
      while (existsSync(`/proc/${holder}`) && Date.now() < deadline) {
        // the holder is reaped by bubblewrap's init inside the machine
      }
      expect(existsSync(`/proc/${holder}`)).toBe(false);
      for (let attempt = 0; attempt < 50 && !impostor; attempt++) {
        writeFileSync("/proc/sys/kernel/ns_last_pid", String(holder - 1));
        const candidate = spawn("/usr/bin/unshare", ["--net", "--ipc", "--uts", "/usr/bin/sleep", "60"], { stdio: "ignore" });
        if (candidate.pid === holder) impostor = candidate;
        else candidate.kill("SIGKILL");
      }
      if (!impostor) {
        ctx.skip("another process took the holder's pid first");
        return;
      }
      const before = new Set(descendantPids());
      const start = startSandbox(rt.runtime, { kind: "bash", limits: rt.limits, workspaceDir, machine });
      const refusal = start.then(() => undefined, (error: unknown) => error);
      // Nothing was spawned to join anything: no nsenter into the impostor's namespaces.
      expect(descendantPids().filter((pid) => !before.has(pid) && running(pid))).toEqual([]);
      expect(await refusal).toMatchObject({ code: "SANDBOX_FAILED", message: "the session's sandbox has stopped" });
      // The machine says so at once, so the session starts a new one instead of reusing it.
      expect(machine.alive).toBe(false);
    } finally {
      impostor?.kill("SIGKILL");
      await machine.dispose();
    }
  });
});
