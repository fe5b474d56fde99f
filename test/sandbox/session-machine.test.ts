// A session is one machine: its languages' runners share its network (loopback), /tmp and limits,
// in real sandboxes; stateless calls still get a sandbox each; nothing is left once it ends.

import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { hostProcessesMatching, useTestEngine, waitFor } from "../helpers.js";

/** Runners join a session's machine where sandgate runs as root with nsenter and setpriv (machinesSupported). */
const canJoin = process.getuid?.() === 0 && existsSync("/usr/bin/nsenter") && existsSync("/usr/bin/setpriv");

function tmpfsMountsUnder(dir: string): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4] ?? "")
    .filter((point) => point.startsWith(dir));
}

describe.runIf(canJoin)("a session's languages on one machine", () => {
  const fx = useTestEngine({}, { python: 1, javascript: 0, bash: 0 });

  it("lets Python reach a server Bash started on loopback, and JavaScript read what Bash wrote to /tmp", async () => {
    const { engine } = fx;
    engine.sessions.create("machine");
    try {
      const served = await engine.execute({
        language: "bash",
        sessionId: "machine",
        keepProcesses: true,
        code: "mkdir -p /tmp/site && echo 'hello from bash' > /tmp/site/index.txt\ncd /tmp/site && python3 -m http.server 8765 --bind 127.0.0.1 >/tmp/server.log 2>&1 &\nfor i in $(seq 50); do (echo > /dev/tcp/127.0.0.1/8765) 2>/dev/null && break; sleep 0.1; done\necho up",
      });
      expect(served).toMatchObject({ status: "ok", stdout: "up\n" });

      const fetched = await engine.execute({
        language: "python",
        sessionId: "machine",
        code: "import urllib.request\nurllib.request.urlopen('http://127.0.0.1:8765/index.txt', timeout=10).read().decode()",
      });
      expect(fetched).toMatchObject({ status: "ok", value: "hello from bash\n" });

      const read = await engine.execute({ language: "javascript", sessionId: "machine", code: "require('fs').readFileSync('/tmp/site/index.txt', 'utf8')" });
      expect(read).toMatchObject({ status: "ok", value: "hello from bash\n" });

      // A stateless call has a sandbox of its own: neither the session's /tmp nor its loopback.
      const apart = await engine.execute({
        language: "python",
        code: "import os, socket\ns = socket.socket()\ns.settimeout(2)\n[os.path.exists('/tmp/site'), s.connect_ex(('127.0.0.1', 8765)) == 0]",
      });
      expect(apart).toMatchObject({ status: "ok", value: [false, false] });
    } finally {
      await engine.sessions.stop("machine");
    }
  });

  it("keeps the session's security in every runner: no capabilities, the seccomp filter, the sandbox user and hostname", async () => {
    const { engine } = fx;
    engine.sessions.create("locked");
    try {
      await engine.execute({ language: "bash", sessionId: "locked", code: "true" });
      const python = await engine.execute({
        language: "python",
        sessionId: "locked",
        code: "import os, socket\nst = dict(l.split(':', 1) for l in open('/proc/self/status').read().splitlines() if ':' in l)\n[st['CapEff'].strip(), st['CapBnd'].strip(), st['Seccomp'].strip(), os.getuid(), socket.gethostname()]",
      });
      expect(python).toMatchObject({ status: "ok", value: ["0000000000000000", "0000000000000000", "2", 1000, "sandgate"] });
      const unshare = await engine.execute({ language: "bash", sessionId: "locked", code: "unshare --user true 2>&1 || echo refused" });
      expect(unshare.stdout).toContain("refused");
    } finally {
      await engine.sessions.stop("locked");
    }
  });

  it("leaves no process and no /tmp mount behind once the session ends", async () => {
    const { engine, dir } = fx;
    engine.sessions.create("ends");
    await engine.execute({ language: "bash", sessionId: "ends", keepProcesses: true, code: "sleep 987611 &\necho x > /tmp/left" });
    await engine.execute({ language: "python", sessionId: "ends", keepProcesses: true, code: "import subprocess\nsubprocess.Popen(['sleep', '987612'])" });
    expect(hostProcessesMatching("987611").length).toBeGreaterThan(0);
    expect(hostProcessesMatching("987612").length).toBeGreaterThan(0);
    expect(tmpfsMountsUnder(dir).length).toBeGreaterThan(0);
    await engine.sessions.stop("ends");
    expect(await waitFor(() => hostProcessesMatching("987611").length === 0 && hostProcessesMatching("987612").length === 0)).toBe(true);
    expect(tmpfsMountsUnder(dir)).toEqual([]);
  });
});
