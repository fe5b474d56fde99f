// Attacks from inside a real bubblewrap sandbox: each must fail and leave the host unharmed.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestEngine, hostProcessesMatching, type TestEngine } from "../helpers.js";

let t: TestEngine;
const secretValue = `s3cr3t-${process.pid}-${Date.now()}`;
const homeSecret = join(homedir(), `.sandgate-test-secret-${process.pid}`);
const tmpSecret = join(tmpdir(), `sandgate-test-secret-${process.pid}`);

beforeAll(() => {
  process.env.SANDGATE_TEST_SECRET = secretValue;
  writeFileSync(homeSecret, secretValue);
  writeFileSync(tmpSecret, secretValue);
  t = createTestEngine();
});

afterAll(async () => {
  delete process.env.SANDGATE_TEST_SECRET;
  rmSync(homeSecret, { force: true });
  rmSync(tmpSecret, { force: true });
  await t.close();
});

const py = (code: string) => t.engine.execute({ code, language: "python" });

describe("network", () => {
  it("outbound TCP fails", async () => {
    const r = await py(`
import socket
try:
    socket.create_connection(("1.1.1.1", 80), timeout=3)
    print("CONNECTED")
except OSError as e:
    print("blocked", e.errno)
`);
    expect(r.status).toBe("ok");
    expect(r.stdout).toContain("blocked");
    expect(r.stdout).not.toContain("CONNECTED");
  });

  it("DNS resolution fails and only loopback exists", async () => {
    const r = await py(`
import socket
try:
    print("resolved", socket.gethostbyname("registry.npmjs.org"))
except OSError as e:
    print("no-dns", type(e).__name__)
print(sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]))
`);
    expect(r.stdout).toContain("no-dns");
    expect(r.stdout).toContain("['lo']");
  });

  it("bash cannot reach the network either", async () => {
    const r = await t.engine.execute({ language: "bash", code: "exec 3<>/dev/tcp/1.1.1.1/80 && echo CONNECTED || echo blocked" });
    expect(r.stdout + r.stderr).toContain("blocked");
    expect(r.stdout).not.toContain("CONNECTED");
  });
});

describe("filesystem", () => {
  it("a secret file in the host home or /tmp cannot be read", async () => {
    const r = await py(`
import os
for p in [${JSON.stringify(homeSecret)}, ${JSON.stringify(tmpSecret)}, "/root", "/home", "/etc/shadow"]:
    try:
        print(p, "READ", open(p).read() if os.path.isfile(p) else os.listdir(p))
    except OSError as e:
        print(p, "denied", type(e).__name__)
`);
    expect(r.status).toBe("ok");
    expect(r.stdout).not.toContain(secretValue);
    expect(r.stdout).not.toContain("READ");
    expect(r.stdout.match(/denied/g)).toHaveLength(5);
  });

  it("writes outside /workspace fail, including via ../ and symlinks made inside", async () => {
    const victimDir = join(tmpdir(), `sandgate-victim-${process.pid}`);
    mkdirSync(victimDir, { recursive: true });
    try {
      const r = await py(`
import os
results = []
def attempt(label, fn):
    try:
        fn(); results.append(label + ":WROTE")
    except OSError as e:
        results.append(label + ":denied")
attempt("usr", lambda: open("/usr/pwned", "w").write("x"))
attempt("etc", lambda: open("/etc/pwned", "w").write("x"))
attempt("dotdot", lambda: open("/workspace/../../${victimDir.slice(1)}/pwned", "w").write("x"))
os.symlink("${victimDir}", "/workspace/link")
attempt("symlink", lambda: open("/workspace/link/pwned", "w").write("x"))
os.symlink("/", "/workspace/root")
attempt("rootlink", lambda: open("/workspace/root/usr/pwned", "w").write("x"))
print(results)
`);
      expect(r.status).toBe("ok");
      expect(r.stdout).not.toContain("WROTE");
      expect(readdirSync(victimDir)).toEqual([]);
      expect(existsSync("/usr/pwned")).toBe(false);
    } finally {
      rmSync(victimDir, { recursive: true, force: true });
    }
  });

  it("the host environment is not visible, not even a secret variable", async () => {
    const r = await py(`import os; print(sorted(os.environ)); print(open("/proc/self/environ").read())`);
    expect(r.stdout).not.toContain(secretValue);
    expect(r.stdout).not.toContain("SANDGATE_TEST_SECRET");
    const b = await t.engine.execute({ language: "bash", code: "env; cat /proc/1/environ 2>&1" });
    expect(b.stdout + b.stderr).not.toContain(secretValue);
  });
});

describe("descriptors", () => {
  it("code inherits no descriptor of the host beyond its own stdio", async () => {
    // A child process lists what it inherited: only /dev/null and the sandbox's own socket pairs.
    const b = await t.engine.execute({ language: "bash", code: "for f in /proc/self/fd/*; do readlink \"$f\"; done" });
    const targets = b.stdout.trim().split("\n");
    expect(targets.length).toBeGreaterThanOrEqual(3);
    // The tool FIFOs the Bash runner holds open are named by their sandbox path, never a host path.
    for (const target of targets) expect(target).toMatch(/^(\/dev\/null|socket:\[\d+\]|\/proc\/\d+\/fd|\/sandgate\/channel\/tool-(replies|requests))$/);
    const p = await t.engine.execute({ language: "python", code: "import os\ndef target(fd):\n    try:\n        return os.readlink(f'/proc/self/fd/{fd}')\n    except OSError:\n        return '/proc/'  # the listing's own descriptor, closed by now\nsorted(int(f) for f in os.listdir('/proc/self/fd') if not target(f).startswith(('socket:', '/dev/null', '/proc/')))" });
    expect(p.value).toEqual([]);
    const j = await t.engine.execute({
      language: "javascript",
      code: `const fs = require("fs");
fs.readdirSync("/proc/self/fd").filter((fd) => Number(fd) > 4).filter((fd) => {
  let info = "";
  try { info = fs.readFileSync("/proc/self/fdinfo/" + fd, "utf8"); } catch { return false; } // the listing's own fd
  const flags = /flags:\\s+(\\d+)/.exec(info);
  return flags !== null && (parseInt(flags[1], 8) & 0o2000000) === 0;
})`,
    });
    expect(j.value).toEqual([]);
  });
});

describe("host identity", () => {
  it("sandboxed code runs as an unprivileged user on the host, so host-wide settings stay shut", async () => {
    const r = await t.engine.execute({
      language: "bash",
      code: "for f in /proc/sys/fs/file-max /proc/sys/vm/drop_caches /proc/sys/kernel/printk_ratelimit; do (echo 1 > $f) 2>/dev/null && echo \"WROTE $f\" || echo \"denied $f\"; done",
    });
    expect(r.stdout).not.toContain("WROTE");
    expect(r.stdout.match(/denied/g)).toHaveLength(3);

    const tag = `sghostuid${Date.now()}`;
    let hostUid: string | undefined;
    await t.engine.execute({
      language: "bash",
      code: `bash -c 'exec -a ${tag} sleep 30' & sleep 0.2; echo go; sleep 2`,
      onOutput: (_stream, text) => {
        if (!text.includes("go") || hostUid !== undefined) return;
        const pid = hostProcessesMatching(tag)[0];
        hostUid = pid === undefined ? "missing" : /Uid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      },
    });
    expect(hostUid).toBeDefined();
    expect(hostUid).not.toBe("missing");
    if (process.getuid?.() === 0) expect(hostUid).not.toBe("0");
    else expect(hostUid).toBe(String(process.getuid?.()));
  });

  // Only a server running as root has an unprivileged user to hand files to; any other runs code as itself.
  it.runIf(process.getuid?.() === 0)("files a session writes belong on the host to that unprivileged user", async () => {
    const s = t.engine.sessions.create();
    try {
      const r = await t.engine.execute({ language: "python", sessionId: s.id, code: "open('/workspace/owned.txt', 'w').write('x')" });
      expect(r.status, r.stderr).toBe("ok");
      const owner = statSync(join(t.engine.sessions.manager.get(s.owner, s.id).workspaceDir, "owned.txt")).uid;
      expect(owner).not.toBe(0);
      expect(owner).toBe(t.engine.runtime.hostUser?.uid);
    } finally {
      await t.engine.sessions.stop(s.id);
    }
  });
});

describe("processes", () => {
  it("/proc shows only the sandbox's own processes, running unprivileged", async () => {
    const r = await py(`
import os
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(pids, os.getuid(), open("/proc/self/status").read().split("CapEff:")[1].split()[0])
`);
    expect(r.status).toBe("ok");
    const [pids, uid, caps] = [JSON.parse(r.stdout.split("]")[0] + "]") as number[], r.stdout.split("] ")[1]!.split(" ")[0], r.stdout.trim().split(" ").pop()];
    expect(pids.length).toBeLessThanOrEqual(3);
    expect(Math.max(...pids)).toBeLessThan(10);
    expect(uid).toBe("1000");
    expect(caps).toMatch(/^0+$/);
  });

  it("the sandbox cannot create new namespaces or use ptrace", async () => {
    const r = await py(`
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print("unshare", libc.unshare(0x10000000), ctypes.get_errno())
print("ptrace", libc.ptrace(16, 1, 0, 0), ctypes.get_errno())
`);
    expect(r.stdout).toMatch(/unshare -1 1\b/);
    expect(r.stdout).toMatch(/ptrace -1 1\b/);
  });
});
