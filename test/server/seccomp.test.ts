// Tests for the seccomp deny-list: the BPF program's shape and decisions (decoded and run in a
// small interpreter), then the real thing inside bubblewrap with the system Python, Node and bash.

import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SECCOMP_ARGUMENT_RULES,
  SECCOMP_DENIED_SYSCALLS,
  buildSeccompProgram,
  isSeccompArchSupported,
} from "../../src/sandbox/seccomp.js";

const AUDIT_ARCH_X86_64 = 0xc000003e;
const AUDIT_ARCH_AARCH64 = 0xc00000b7;
const AUDIT_ARCH_I386 = 0x40000003;
const RET_KILL_PROCESS = 0x80000000;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
const EAFNOSUPPORT = 97;
const errnoAction = (code: number): number => (RET_ERRNO | code) >>> 0;

interface Insn {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

function decode(program: Buffer): Insn[] {
  const insns: Insn[] = [];
  for (let off = 0; off < program.length; off += 8) {
    insns.push({
      code: program.readUInt16LE(off),
      jt: program.readUInt8(off + 2),
      jf: program.readUInt8(off + 3),
      k: program.readUInt32LE(off + 4),
    });
  }
  return insns;
}

interface SeccompData {
  nr: number;
  arch: number;
  /** Low 32 bits of each argument; high halves are zero. */
  args?: number[];
}

/** Runs a decoded program the way the kernel would, for the opcodes a seccomp filter uses. */
function evaluate(program: Buffer, data: SeccompData): number {
  const insns = decode(program);
  const load = (offset: number): number => {
    if (offset === 0) return data.nr >>> 0;
    if (offset === 4) return data.arch >>> 0;
    if (offset >= 16 && offset < 64 && offset % 8 === 0) return (data.args?.[(offset - 16) / 8] ?? 0) >>> 0;
    if (offset >= 16 && offset < 64 && offset % 8 === 4) return 0;
    throw new Error(`load from offset ${offset}`);
  };
  let acc = 0;
  for (let pc = 0; pc < insns.length; pc++) {
    const insn = insns[pc]!;
    switch (insn.code) {
      case 0x20: // ld w abs
        acc = load(insn.k);
        break;
      case 0x15: // jeq k
        pc += acc === insn.k ? insn.jt : insn.jf;
        break;
      case 0x25: // jgt k
        pc += acc > insn.k ? insn.jt : insn.jf;
        break;
      case 0x35: // jge k
        pc += acc >= insn.k ? insn.jt : insn.jf;
        break;
      case 0x45: // jset k
        pc += (acc & insn.k) !== 0 ? insn.jt : insn.jf;
        break;
      case 0x06: // ret k
        return insn.k;
      default:
        throw new Error(`unexpected opcode 0x${insn.code.toString(16)} at ${pc}`);
    }
  }
  throw new Error("fell off the end of the program");
}

/** x86_64 syscall numbers from the installed kernel headers: a source independent of ours. */
function headerSyscalls(): Map<string, number> | null {
  const path = ["/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"].find(existsSync);
  if (path === undefined) return null;
  const table = new Map<string, number>();
  for (const match of readFileSync(path, "utf8").matchAll(/^#define __NR_(\w+) (\d+)$/gm)) {
    table.set(match[1]!, Number(match[2]));
  }
  return table;
}

const expectedErrno = (name: string): number => (name === "clone3" ? ENOSYS : EPERM);

describe("seccomp program", () => {
  it.each(["x64", "arm64"] as const)("is a well-formed classic BPF program for %s", (arch) => {
    const program = buildSeccompProgram(arch);
    expect(program.length % 8).toBe(0);
    const insns = decode(program);
    expect(insns.length).toBeGreaterThan(0);
    expect(insns.length).toBeLessThanOrEqual(4096);
    insns.forEach((insn, pc) => {
      expect([0x20, 0x15, 0x25, 0x35, 0x45, 0x06]).toContain(insn.code);
      if ((insn.code & 0x07) === 0x05) {
        expect(pc + 1 + insn.jt).toBeLessThan(insns.length);
        expect(pc + 1 + insn.jf).toBeLessThan(insns.length);
      }
    });
    expect(insns.at(-1)?.code).toBe(0x06);
  });

  it("kills any other syscall ABI, including i386 on x86_64", () => {
    const x64 = buildSeccompProgram("x64");
    const arm64 = buildSeccompProgram("arm64");
    expect(evaluate(x64, { nr: 20, arch: AUDIT_ARCH_I386 })).toBe(RET_KILL_PROCESS);
    expect(evaluate(x64, { nr: 63, arch: AUDIT_ARCH_AARCH64 })).toBe(RET_KILL_PROCESS);
    expect(evaluate(arm64, { nr: 39, arch: AUDIT_ARCH_X86_64 })).toBe(RET_KILL_PROCESS);
  });

  it("denies the x32 ABI on x86_64", () => {
    const x64 = buildSeccompProgram("x64");
    expect(evaluate(x64, { nr: 0x40000000 | 39, arch: AUDIT_ARCH_X86_64 })).toBe(errnoAction(EPERM));
    expect(evaluate(x64, { nr: 39, arch: AUDIT_ARCH_X86_64 })).toBe(RET_ALLOW);
  });

  const headers = headerSyscalls();
  it.skipIf(headers === null)("denies exactly the listed x86_64 syscalls, numbered as in the kernel headers", () => {
    const x64 = buildSeccompProgram("x64");
    const denied = new Set(SECCOMP_DENIED_SYSCALLS);
    for (const name of denied) {
      const nr = headers!.get(name);
      expect(nr, `${name} in unistd_64.h`).toBeDefined();
      expect(evaluate(x64, { nr: nr!, arch: AUDIT_ARCH_X86_64 }), name).toBe(errnoAction(expectedErrno(name)));
    }
    // Everything else passes with ordinary arguments: a deny-list must not break the runtime.
    for (const [name, nr] of headers!) {
      if (denied.has(name)) continue;
      const args = name === "socket" ? [1] : [];
      expect(evaluate(x64, { nr, arch: AUDIT_ARCH_X86_64, args }), name).toBe(RET_ALLOW);
    }
  });

  it("uses the asm-generic numbers on aarch64", () => {
    const arm64 = buildSeccompProgram("arm64");
    const run = (nr: number, args: number[] = []): number => evaluate(arm64, { nr, arch: AUDIT_ARCH_AARCH64, args });
    expect(run(117)).toBe(errnoAction(EPERM)); // ptrace
    expect(run(40)).toBe(errnoAction(EPERM)); // mount
    expect(run(97)).toBe(errnoAction(EPERM)); // unshare
    expect(run(280)).toBe(errnoAction(EPERM)); // bpf
    expect(run(219)).toBe(errnoAction(EPERM)); // keyctl
    expect(run(435)).toBe(errnoAction(ENOSYS)); // clone3
    expect(run(198, [16])).toBe(errnoAction(EAFNOSUPPORT)); // socket(AF_NETLINK)
    expect(run(198, [1])).toBe(RET_ALLOW);
    expect(run(220, [0x40000000 | 17])).toBe(errnoAction(EPERM)); // clone(CLONE_NEWNET)
    expect(run(220, [0x003d0f00])).toBe(RET_ALLOW); // clone as pthread_create calls it
    expect(run(29, [0, 0x5412])).toBe(errnoAction(EPERM)); // ioctl(TIOCSTI)
    // x86_64 numbers mean other things here: iopl (172) is getpid, ptrace (101) is nanosleep.
    expect(run(172)).toBe(RET_ALLOW);
    expect(run(101)).toBe(RET_ALLOW);
    expect(run(63)).toBe(RET_ALLOW); // read
  });

  it("filters socket families, clone flags, ioctls and personalities by argument", () => {
    const x64 = buildSeccompProgram("x64");
    const run = (nr: number, args: number[]): number => evaluate(x64, { nr, arch: AUDIT_ARCH_X86_64, args });
    for (const family of [1, 2, 10]) expect(run(41, [family])).toBe(RET_ALLOW);
    for (const family of [0, 16, 17, 40, 38]) expect(run(41, [family])).toBe(errnoAction(EAFNOSUPPORT));
    const newFlags = [0x20000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x80];
    for (const flag of newFlags) expect(run(56, [flag | 17])).toBe(errnoAction(EPERM));
    expect(run(56, [0x01200011])).toBe(RET_ALLOW); // fork(): CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD
    expect(run(16, [0, 0x5412])).toBe(errnoAction(EPERM));
    expect(run(16, [0, 0x541c])).toBe(errnoAction(EPERM));
    expect(run(16, [0, 0x5401])).toBe(RET_ALLOW); // TCGETS
    expect(run(135, [0xffffffff])).toBe(RET_ALLOW);
    expect(run(135, [0])).toBe(RET_ALLOW);
    expect(run(135, [0x0040000])).toBe(errnoAction(EPERM)); // ADDR_NO_RANDOMIZE
  });

  it("names what it denies and refuses architectures it has no table for", () => {
    for (const name of ["ptrace", "mount", "unshare", "setns", "keyctl", "bpf", "io_uring_setup", "clone3"]) {
      expect(SECCOMP_DENIED_SYSCALLS).toContain(name);
    }
    expect(SECCOMP_ARGUMENT_RULES.join("\n")).toMatch(/socket/);
    expect(isSeccompArchSupported("x64")).toBe(true);
    expect(isSeccompArchSupported("arm64")).toBe(true);
    expect(isSeccompArchSupported("ia32")).toBe(false);
    expect(() => buildSeccompProgram("ia32")).toThrow(/ia32/);
  });
});

// ---------------------------------------------------------------------------------------------

const BWRAP = "/usr/bin/bwrap";
const canSandbox =
  process.platform === "linux" && process.arch === "x64" && existsSync(BWRAP) && existsSync("/usr/bin/python3");

const BWRAP_BASE = [
  "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
  "--uid", "1000", "--gid", "1000", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
  "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
  "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
  "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
  "--clearenv", "--setenv", "PATH", "/usr/bin:/bin",
];

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** How the filter reaches bwrap: an fd of an opened file, a pipe we write, or not at all. */
type Delivery = "file" | "pipe" | "none";

describe.skipIf(!canSandbox)("seccomp inside bubblewrap", () => {
  let dir = "";
  let programPath = "";

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "sandgate-seccomp-"));
    programPath = join(dir, "filter.bpf");
    writeFileSync(programPath, buildSeccompProgram());
  });

  afterAll(() => {
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  async function sandboxed(command: string[], delivery: Delivery = "file"): Promise<RunResult> {
    const seccompArgs = delivery === "none" ? [] : ["--seccomp", "3"];
    // Each run needs its own open file description: bwrap reads to EOF, and the offset is shared.
    const fd = delivery === "file" ? openSync(programPath, "r") : null;
    try {
      const child = spawn(BWRAP, [...BWRAP_BASE, ...seccompArgs, ...command], {
        stdio: ["ignore", "pipe", "pipe", fd ?? (delivery === "pipe" ? "pipe" : "ignore")],
      });
      const sink = child.stdio[3];
      if (delivery === "pipe") {
        if (!(sink instanceof Writable)) throw new Error("no pipe on fd 3");
        sink.end(buildSeccompProgram());
      }
      let stdout = "";
      let stderr = "";
      child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      const killer = setTimeout(() => child.kill("SIGKILL"), 45_000);
      try {
        const code = await new Promise<number | null>((resolve, reject) => {
          child.once("error", reject);
          child.once("close", (exitCode) => resolve(exitCode));
        });
        return { code, stdout, stderr };
      } finally {
        clearTimeout(killer);
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      }
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }

  async function python(code: string, delivery: Delivery = "file"): Promise<RunResult> {
    const result = await sandboxed(["/usr/bin/python3", "-c", code], delivery);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    return result;
  }

  it.each(["file", "pipe"] as const)("is installed when given to bwrap on fd 3 as a %s", async (delivery) => {
    const result = await sandboxed(["/usr/bin/bash", "-c", "grep -E '^Seccomp(_filters)?:' /proc/self/status"], delivery);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Seccomp:\s+2$/m);
    expect(result.stdout).toMatch(/^Seccomp_filters:\s+1$/m);
  });

  it("still runs Python with threads, subprocess and fork", async () => {
    const { stdout } = await python(
      [
        "import json, os, subprocess, threading",
        "out = []",
        "threads = [threading.Thread(target=lambda i=i: out.append(i * i)) for i in range(4)]",
        "[t.start() for t in threads]; [t.join() for t in threads]",
        "child = subprocess.run(['/usr/bin/echo', 'child'], capture_output=True, text=True).stdout.strip()",
        "pid = os.fork()",
        "if pid == 0: os._exit(7)",
        "status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])",
        "print(json.dumps({'squares': sorted(out), 'child': child, 'fork': status}))",
      ].join("\n"),
    );
    expect(JSON.parse(stdout)).toEqual({ squares: [0, 1, 4, 9], child: "child", fork: 7 });
  });

  it("still runs Node with async fs, worker threads and child processes", async () => {
    const script = [
      "const fs = require('fs'); const cp = require('child_process'); const { Worker } = require('worker_threads');",
      "const w = new Worker('require(\"worker_threads\").parentPort.postMessage(6 * 7)', { eval: true });",
      "w.once('message', async (n) => {",
      "  const size = (await fs.promises.readFile('/etc/ld.so.cache')).length > 0;",
      "  const echo = cp.execFileSync('/usr/bin/echo', ['hi']).toString().trim();",
      "  console.log(JSON.stringify({ n, size, echo }));",
      "  await w.terminate();",
      "});",
    ].join("\n");
    const result = await sandboxed(["/usr/bin/node", "-e", script]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ n: 42, size: true, echo: "hi" });
  });

  it("still runs bash pipelines and background jobs", async () => {
    const result = await sandboxed(["/usr/bin/bash", "-c", "echo a | tr a b; (echo c) & wait"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("b\nc\n");
  });

  it("keeps AF_UNIX sockets and loopback AF_INET/AF_INET6 working", async () => {
    const { stdout } = await python(
      [
        "import socket",
        "a, b = socket.socketpair(); a.sendall(b'ping'); assert b.recv(4) == b'ping'",
        "srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); srv.bind('/tmp/s.sock'); srv.listen()",
        "cli = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); cli.connect('/tmp/s.sock')",
        "conn, _ = srv.accept(); cli.sendall(b'unix'); assert conn.recv(4) == b'unix'",
        "tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM); tcp.bind(('127.0.0.1', 0)); tcp.listen()",
        "c = socket.create_connection(tcp.getsockname()); s, _ = tcp.accept(); c.sendall(b'inet'); assert s.recv(4) == b'inet'",
        "socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).close()",
        "print('ok')",
      ].join("\n"),
    );
    expect(stdout).toBe("ok\n");
  });

  // Each attempt runs in a forked child whose exit code is 0 on success or the errno it got;
  // i386 is the return code of a child Python, -31 meaning it was killed by SIGSYS.
  const PROBE = `
import ctypes, json, os, signal, socket, subprocess, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.personality.argtypes = [ctypes.c_ulong]
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]

def raw(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return ctypes.get_errno() if r == -1 else 0

def libc_call(fn, *args):
    ctypes.set_errno(0)
    return ctypes.get_errno() if fn(*args) == -1 else 0

def sock(family, kind):
    try:
        socket.socket(family, kind, 0).close()
        return 0
    except OSError as e:
        return e.errno

def clone(flags):
    pid = libc.syscall(ctypes.c_long(56), ctypes.c_long(flags | int(signal.SIGCHLD)), *[ctypes.c_long(0)] * 4)
    if pid == 0:
        os._exit(0)
    if pid < 0:
        return ctypes.get_errno()
    os.waitpid(pid, 0)
    return 0

def ptrace_attach():
    pid = os.fork()
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    try:
        return libc_call(libc.ptrace, 16, pid, None, None)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)

I386_GETPID = "import ctypes, mmap; m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC); m.write(bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3])); print(ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))())"
null = os.open('/dev/null', os.O_RDWR)
char = ctypes.byref(ctypes.c_char(b'x'))

def isolated(attempt):
    # A successful unshare or personality change would skew the attempts after it.
    pid = os.fork()
    if pid == 0:
        os._exit(attempt())
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])

attempts = {
    'netlink': lambda: sock(socket.AF_NETLINK, socket.SOCK_RAW),
    'packet': lambda: sock(socket.AF_PACKET, socket.SOCK_RAW),
    'vsock': lambda: sock(40, socket.SOCK_STREAM),
    'unshareUser': lambda: libc_call(libc.unshare, 0x10000000),
    'unshareNet': lambda: libc_call(libc.unshare, 0x40000000),
    'setns': lambda: raw(308, null, 0),
    'ptraceAttach': ptrace_attach,
    'mount': lambda: libc_call(libc.mount, b'none', b'/nonexistent', b'tmpfs', 0, None),
    'keyctl': lambda: raw(250, 9999),
    'bpf': lambda: raw(321, 9999, 0, 0),
    'ioUring': lambda: raw(425, 0, 0),
    'clone3': lambda: raw(435, 0, 0),
    'cloneNewUser': lambda: clone(0x10000000),
    'cloneNewNet': lambda: clone(0x40000000),
    'tiocsti': lambda: libc_call(libc.ioctl, null, 0x5412, char),
    'tiocstiHighBits': lambda: libc_call(libc.ioctl, null, 0x100005412, char),
    'personalityNoAslr': lambda: libc_call(libc.personality, 0x0040000),
    'x32': lambda: raw(0x40000000 | 39),
}
results = {name: isolated(attempt) for name, attempt in attempts.items()}
results['i386'] = subprocess.run([sys.executable, '-c', I386_GETPID], capture_output=True).returncode
print(json.dumps(results))
`;

  const BLOCKED = {
    netlink: EAFNOSUPPORT,
    packet: EAFNOSUPPORT,
    vsock: EAFNOSUPPORT,
    unshareUser: EPERM,
    unshareNet: EPERM,
    setns: EPERM,
    ptraceAttach: EPERM,
    mount: EPERM,
    keyctl: EPERM,
    bpf: EPERM,
    ioUring: EPERM,
    clone3: ENOSYS,
    cloneNewUser: EPERM,
    cloneNewNet: EPERM,
    tiocsti: EPERM,
    tiocstiHighBits: EPERM,
    personalityNoAslr: EPERM,
    x32: EPERM,
    i386: -31, // killed by SIGSYS
  };

  it("blocks namespace, ptrace, mount, keyring, bpf, raw-socket, TIOCSTI and foreign-ABI attempts", async () => {
    const { stdout } = await python(PROBE);
    expect(JSON.parse(stdout)).toEqual(BLOCKED);
  });

  it("blocks them because of the filter: without it the same probe gets further", async () => {
    const result = await sandboxed(["/usr/bin/python3", "-c", PROBE], "none");
    expect(result.code).toBe(0);
    const unfiltered = JSON.parse(result.stdout) as Record<string, number>;
    // These can fail in the bare sandbox too (no capabilities, host sysctls); every other one gets further.
    const alsoFailWithoutFilter = new Set(["unshareNet", "cloneNewNet", "bpf", "ioUring"]);
    for (const [key, blocked] of Object.entries(BLOCKED)) {
      if (!alsoFailWithoutFilter.has(key)) expect(unfiltered[key], key).not.toBe(blocked);
    }
  });

  const headers = headerSyscalls();
  it.skipIf(headers === null)("fails every denied syscall with its errno when called for real", async () => {
    const numbers = SECCOMP_DENIED_SYSCALLS.map((name) => headers!.get(name)!);
    // Zero arguments: even if the filter let one through, none of these can harm a capability-less sandbox.
    const { stdout } = await python(
      [
        "import ctypes, json, sys",
        "libc = ctypes.CDLL(None, use_errno=True)",
        "libc.syscall.restype = ctypes.c_long",
        "def raw(nr):",
        "    ctypes.set_errno(0)",
        "    return ctypes.get_errno() if libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(0)] * 6) == -1 else 0",
        `print(json.dumps([raw(nr) for nr in ${JSON.stringify(numbers)}]))`,
      ].join("\n"),
    );
    const results = JSON.parse(stdout) as number[];
    expect(Object.fromEntries(SECCOMP_DENIED_SYSCALLS.map((name, i) => [name, results[i]]))).toEqual(
      Object.fromEntries(SECCOMP_DENIED_SYSCALLS.map((name) => [name, expectedErrno(name)])),
    );
  });
});
