// keep_processes: processes a session's call leaves running (a server started with &) stay alive
// across its later calls, within its limits, and end with the session; without it they end with the call.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { descendantPids, useTestEngine, waitFor } from "../helpers.js";

const t = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

/** Bash that prints the first line served on `port` of loopback, trying for up to 5 s; "refused" if nothing answers. */
const fetchFrom = (port: number): string =>
  `python3 -c "
import time, urllib.request
for _ in range(50):
    try:
        print(urllib.request.urlopen('http://127.0.0.1:${port}/', timeout=2).read().decode().splitlines()[0])
        break
    except OSError:
        time.sleep(0.1)
else:
    print('refused')
"`;

/** Host processes of this test whose command line mentions `text`. */
function hostProcessesWith(text: string): number[] {
  return descendantPids().filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text);
    } catch {
      return false;
    }
  });
}

describe("keep_processes", () => {
  it("keeps a server started in one call for the session's later calls, and the session's end stops it", async () => {
    const session = t.engine.sessions.create();
    try {
      const start = await t.engine.execute({
        language: "bash",
        sessionId: session.id,
        keepProcesses: true,
        code: "mkdir -p /tmp/site && echo hello-from-kept > /tmp/site/index.html\npython3 -m http.server 8765 --bind 127.0.0.1 --directory /tmp/site > /tmp/server.log 2>&1 &\necho started",
      });
      expect(start).toMatchObject({ status: "ok", stdout: "started\n" });
      const first = await t.engine.execute({ language: "bash", sessionId: session.id, code: fetchFrom(8765) });
      expect(first.stdout).toBe("hello-from-kept\n");
      // A later call without keep_processes leaves the kept server alone.
      const again = await t.engine.execute({ language: "bash", sessionId: session.id, code: fetchFrom(8765) });
      expect(again.stdout).toBe("hello-from-kept\n");
      expect(hostProcessesWith("http.server")).toHaveLength(1);
    } finally {
      await t.engine.sessions.stop(session.id);
    }
    expect(await waitFor(() => hostProcessesWith("http.server").length === 0)).toBe(true);
  });

  it("keeps a process a Python call started with subprocess.Popen", async () => {
    const session = t.engine.sessions.create();
    try {
      const code = "import subprocess\nserver = subprocess.Popen(['python3', '-m', 'http.server', '8766', '--bind', '127.0.0.1'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\nserver.pid";
      const start = await t.engine.execute({ language: "python", sessionId: session.id, keepProcesses: true, code });
      expect(start.status).toBe("ok");
      const next = await t.engine.execute({ language: "python", sessionId: session.id, code: "server.poll() is None" });
      expect(next.value).toBe(true);
      // Each language runs in its own sandbox (its own loopback): Python fetches from it.
      const fetch = "import time, urllib.request\nfor _ in range(50):\n    try:\n        page = urllib.request.urlopen('http://127.0.0.1:8766/', timeout=2).read()\n        break\n    except OSError:\n        time.sleep(0.1)\npage[:15]";
      const served = await t.engine.execute({ language: "python", sessionId: session.id, code: fetch });
      expect(served.value).toMatch(/^b'<!DOCTYPE HTML/i);
    } finally {
      await t.engine.sessions.stop(session.id);
    }
  });

  it("keeps a JavaScript call's child process, while later calls still stop their own", async () => {
    const session = t.engine.sessions.create();
    try {
      const spawn = (seconds: number): string => `require('child_process').spawn('sleep', ['${seconds}'], { stdio: 'ignore' }).pid`;
      const kept = await t.engine.execute({ language: "javascript", sessionId: session.id, keepProcesses: true, code: spawn(101) });
      expect(kept.status).toBe("ok");
      const own = await t.engine.execute({ language: "javascript", sessionId: session.id, code: spawn(102) });
      expect(own.status).toBe("ok");
      const list = "require('fs').readdirSync('/proc').filter((n) => /^\\d+$/.test(n)).map((n) => { try { return require('fs').readFileSync(`/proc/${n}/cmdline`, 'latin1').split('\\0').join(' ').trim(); } catch { return ''; } }).filter((c) => c.startsWith('sleep'))";
      const left = await t.engine.execute({ language: "javascript", sessionId: session.id, code: list });
      expect(left.value).toEqual(["sleep 101"]);
    } finally {
      await t.engine.sessions.stop(session.id);
    }
  });

  it("without it, a server started in the background is gone when the call ends", async () => {
    const session = t.engine.sessions.create();
    try {
      await t.engine.execute({ language: "bash", sessionId: session.id, code: "python3 -m http.server 8767 --bind 127.0.0.1 > /dev/null 2>&1 &\nsleep 0.5" });
      const next = await t.engine.execute({ language: "bash", sessionId: session.id, code: fetchFrom(8767) });
      expect(next.stdout).toBe("refused\n");
    } finally {
      await t.engine.sessions.stop(session.id);
    }
  });

  it("is refused without a session", async () => {
    await expect(t.engine.execute({ language: "bash", keepProcesses: true, code: "sleep 100 &" })).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });
});
