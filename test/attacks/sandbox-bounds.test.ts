// Bounded memory and time per sandbox, attacked from inside real sandboxes: tool-call floods that
// never read their replies, output between calls, idle CPU, partial frames, unsized tmpfs.

import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import type { ResolvedLimits } from "../../src/sandbox/limits.js";
import { encodeFrame, FrameDecoder } from "../../src/sandbox/protocol.js";
import type { RunnerKind } from "../../src/sandbox/runtime.js";
import { BashUpstreamRequestDecoder } from "../../src/sandbox/upstream-calls.js";
import type { RunOutcome, RunRequest, Sandbox } from "../../src/sandbox/sandbox.js";
import { descendantPids, sleep } from "../helpers.js";
import { useRawRuntime, type RawRuntime } from "../fixtures/runtime.js";
import { sampleRssGrowth } from "../fixtures/samplers.js";

const withCgroups = useRawRuntime("bounds-cg");
const withoutCgroups = useRawRuntime("bounds-rl", () => ({ useCgroups: false }));
const FILENAME: Record<RunnerKind, string> = { python: "main.py", javascript: "main.js", bash: "main.sh" };

async function start(raw: RawRuntime, kind: RunnerKind, extra: { workspaceDir?: string; limits?: ResolvedLimits } = {}): Promise<Sandbox> {
  let chosen = extra.limits ?? raw.limits;
  // Without a pids cgroup, RLIMIT_NPROC counts every process of the host user all sandboxes run
  // as, other test files' included; the processes limit is not what these tests are about.
  if (raw.runtime.cgroups.mode === "none") chosen = { ...chosen, processes: 1 << 20 };
  return raw.start(kind, { limits: chosen, ...(extra.workspaceDir ? { workspaceDir: extra.workspaceDir } : {}) });
}

function run(sandbox: Sandbox, code: string, extra: Partial<RunRequest> = {}): Promise<RunOutcome> {
  return sandbox.run({ code, filename: FILENAME[sandbox.kind], timeoutMs: 20_000, outputCapBytes: 1 << 20, ...extra });
}

/** A session-like workspace the sandbox user owns. */
const workspace = (name: string): string => withCgroups.workspace(name);

/** Samples this process's RSS until called; returns the largest growth seen, in MB. */
function watchRss(): () => number {
  const rss = sampleRssGrowth(50);
  return () => rss.stop() / 1048576;
}

/** CPU clock ticks used so far by every process this test process started (its sandboxes). */
function sandboxCpuTicks(): number {
  let ticks = 0;
  for (const pid of descendantPids()) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone
    }
  }
  return ticks;
}

/** Runs `code` (a flood of tool calls whose replies it never reads) and expects the sandbox stopped for it, the host's memory bounded. */
async function expectStoppedForUnreadReplies(kind: RunnerKind, code: string): Promise<void> {
  const sandbox = await start(withCgroups, kind);
  const rss = watchRss();
  // No tool handler at all: every call is answered at once, the situation that reached 2.6 GB.
  const outcome = await run(sandbox, code);
  expect(rss()).toBeLessThan(300);
  expect(outcome.status).toBe("killed");
  expect(outcome.message).toMatch(/stopped reading tool-call replies/);
  expect(sandbox.alive).toBe(false);
}

describe("tool-call replies a sandbox does not read", () => {
  it("stop a stateless Python run that floods raw tool_call frames on fd 4, without the host buffering the replies", async () => {
    await expectStoppedForUnreadReplies(
      "python",
      [
        "import json, os",
        'frame = json.dumps({"type": "tool_call", "callId": "c", "tool": "a.b", "args": {}}).encode()',
        'batch = (len(frame).to_bytes(4, "big") + frame) * 1000',
        "while True:",
        "    os.write(4, batch)",
      ].join("\n"),
    );
  });

  it("are no reason to stop a program that starts 5,000 calls at once and then awaits them all", async () => {
    const sandbox = await start(withCgroups, "python");
    const code = [
      "import asyncio",
      "results = await asyncio.gather(*[call_mcp_tool('a.b') for _ in range(5000)], return_exceptions=True)",
      "len([r for r in results if isinstance(r, ToolError)])",
    ].join("\n");
    const outcome = await run(sandbox, code);
    expect(outcome.status).toBe("ok");
    expect(outcome.result?.value).toBe(5000);
  });

  it("stop a Bash run that writes tool requests to its request pipe and never reads a reply", async () => {
    await expectStoppedForUnreadReplies(
      "bash",
      ["out=${SANDGATE_TOOL_FDS#* }", "req=$(printf 'c1 a.b\\n{}\\\\0%.0s' {1..500})", 'while :; do printf "$req" >&"$out"; done'].join("\n"),
    );
  });
});

describe("output between calls of a session", () => {
  for (const [name, runtime] of [
    ["frozen where the host has a freezer", () => withCgroups],
    ["discarded without cgroups", () => withoutCgroups],
  ] as const) {
    it(`is ${name}: the next call's output is its own, the host holds no backlog, and another client is served meanwhile`, async () => {
      const sandbox = await start(runtime(), "python", { workspaceDir: workspace(`flood-${name.length}`) });
      const first = await run(
        sandbox,
        [
          "import os, threading",
          "stop = False",
          "def flood():",
          "    chunk = b'x' * 65536",
          "    while not stop:",
          "        os.write(1, chunk)",
          "t = threading.Thread(target=flood, daemon=True)",
          "t.start()",
          "'started'",
        ].join("\n"),
        { outputCapBytes: 1 << 30 },
      );
      expect(first.status).toBe("ok");
      const other = await start(withCgroups, "bash");
      const rss = watchRss();
      // Another client's calls go through while the session idles with its thread.
      for (let i = 0; i < 5; i++) {
        const outcome = await run(other, `echo served ${i}`);
        expect(outcome.stdout.toString()).toBe(`served ${i}\n`);
      }
      await sleep(1500);
      expect(rss()).toBeLessThan(200);
      if (runtime().runtime.cgroups.freezer) expect(sandbox.isFrozen).toBe(true);
      else expect(sandbox.discardedOutputBytes).toBeGreaterThan(0);
      const second = await run(sandbox, "stop = True\nt.join()\nprint('clean')", { outputCapBytes: 8 << 20 });
      expect(second.status).toBe("ok");
      const stdout = second.stdout.toString();
      expect(stdout.endsWith("clean\n")).toBe(true);
      // At most what the thread wrote in the moment before it read `stop`, never the backlog.
      expect(second.stdout.length).toBeLessThan(4 << 20);
    });
  }

  it("is frozen, so a Node session whose timer keeps the CPU busy after its call uses none until the next call", async (context) => {
    // Asked of the host, not of sandgate: a host with a freezer must freeze.
    const hostHasFreezer = withCgroups.runtime.cgroups.mode === "v2" || (withCgroups.runtime.cgroups.mode === "v1" && /\sfreezer\s|,freezer[\s,]/.test(readFileSync("/proc/self/mounts", "utf8")));
    if (!hostHasFreezer) context.skip();
    const sandbox = await start(withCgroups, "javascript", { workspaceDir: workspace("busy-node") });
    const first = await run(sandbox, "globalThis.spin = setInterval(() => { const end = Date.now() + 50; while (Date.now() < end); }, 1); 'spinning'");
    expect(first.status).toBe("ok");
    const before = sandboxCpuTicks();
    await sleep(1500);
    const used = sandboxCpuTicks() - before;
    // Running, the timer would use about 150 ticks (1.5 s of CPU) here.
    expect(used).toBeLessThan(15);
    const second = await run(sandbox, "clearInterval(globalThis.spin); 'stopped'");
    expect(second.status).toBe("ok");
    expect(second.result?.value).toBe("stopped");
  });

  it("keeps working after freezing: a frozen session sandbox times out, is killed and is disposed cleanly", async () => {
    const sandbox = await start(withCgroups, "python", { workspaceDir: workspace("frozen-kill") });
    expect((await run(sandbox, "x = 1")).status).toBe("ok");
    const timedOut = await run(sandbox, "while True: pass", { timeoutMs: 1000 });
    expect(timedOut.status).toBe("timeout");
    const again = await start(withCgroups, "python", { workspaceDir: workspace("frozen-kill") });
    expect((await run(again, "1 + 1")).result?.value).toBe(2);
    // Disposing a frozen sandbox leaves no process behind.
    await again.dispose();
    await sandbox.dispose();
    expect(descendantPids().length).toBe(0);
  });
});

describe("frames from a runner", () => {
  it("are joined once, not on every chunk: a frame arriving in 1,024 pieces costs no quadratic copying", () => {
    const decoder = new FrameDecoder(64 * 1024 * 1024);
    const body = Buffer.from(JSON.stringify({ type: "tool_call", callId: "c", tool: "a.b", args: { blob: "y".repeat(64 * 1024 * 1024 - 100) } }));
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0]), body]);
    frame.writeUInt32BE(body.length, 0);
    const concat = vi.spyOn(Buffer, "concat");
    try {
      const piece = Math.ceil(frame.length / 1024);
      let frames: ReturnType<FrameDecoder["push"]> = [];
      for (let at = 0; at < frame.length; at += piece) frames = frames.concat(decoder.push(frame.subarray(at, at + piece)));
      expect(concat).not.toHaveBeenCalled();
      expect(frames).toHaveLength(1);
      expect(frames[0]).toMatchObject({ type: "tool_call", callId: "c" });
      expect(decoder.pendingBytes).toBe(0);
    } finally {
      concat.mockRestore();
    }
  });

  it("of the Bash tool pipe are joined once per request, and one without an end is dropped, not held", () => {
    const decoder = new BashUpstreamRequestDecoder();
    const request = Buffer.from(`c1 a.b\n${JSON.stringify({ blob: "y".repeat(8 * 1024 * 1024) })}\u0000`);
    const concat = vi.spyOn(Buffer, "concat");
    try {
      const piece = Math.ceil(request.length / 1024);
      const got = [];
      for (let at = 0; at < request.length; at += piece) got.push(...decoder.push(request.subarray(at, at + piece)));
      expect(concat).toHaveBeenCalledTimes(1);
      expect(got).toHaveLength(1);
      expect(got[0]).toMatchObject({ callId: "c1", tool: "a.b" });
    } finally {
      concat.mockRestore();
    }
    const endless = Buffer.alloc(1024 * 1024, 120);
    for (let i = 0; i < 20; i++) expect(decoder.push(endless)).toEqual([]);
    expect(decoder.push(Buffer.from("tail\u0000c2 a.b\n{}\u0000"))).toEqual([{ callId: "c2", tool: "a.b", argsText: "{}" }]);
  });

  it("larger than a runner may send are refused at the header, before any body is held", () => {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(64 * 1024 * 1024);
    expect(() => new FrameDecoder().push(header)).toThrow(/exceeds/);
    expect(encodeFrame({ type: "execute", id: "e", code: "", marker: "m", filename: "main.py" }).length).toBeGreaterThan(4);
  });

  it("announced larger than a runner may send stop the sandbox with a message saying so", async () => {
    const sandbox = await start(withCgroups, "python");
    const outcome = await run(sandbox, "import os, time\nos.write(4, (64 << 20).to_bytes(4, 'big'))\ntime.sleep(30)");
    expect(outcome.status).toBe("killed");
    expect(outcome.message).toMatch(/broke the runner protocol on fd 4 \(frame of 67108864 bytes exceeds/);
  });

  it("that stay partial leave the host serving others, and the run ends at its timeout", async () => {
    const sandbox = await start(withCgroups, "python");
    const other = await start(withCgroups, "bash");
    const code = [
      "import os, time",
      "size = 15 * 1024 * 1024",
      "os.write(4, (size + 1000).to_bytes(4, 'big'))",
      "piece = b' ' * 65536",
      "for _ in range(size // len(piece)):",
      "    os.write(4, piece)",
      "time.sleep(60)",
    ].join("\n");
    const pending = run(sandbox, code, { timeoutMs: 4000 });
    for (let i = 0; i < 5; i++) expect((await run(other, `echo ${i}`)).stdout.toString()).toBe(`${i}\n`);
    const outcome = await pending;
    expect(outcome.status).toBe("timeout");
  });
});

describe("scratch space without cgroups (rlimit mode)", () => {
  it("sizes /tmp and /dev/shm from the memory limit and keeps /dev read-only", async () => {
    const small = { ...withoutCgroups.limits, memoryMb: 64 };
    const sandbox = await start(withoutCgroups, "python", { limits: small });
    const code = [
      "import errno, os",
      "def fill(directory, cap):",
      "    total, n = 0, 0",
      "    try:",
      "        while total < cap:",
      "            with open(f'{directory}/f{n}', 'wb') as f:",
      "                for _ in range(8):",
      "                    f.write(b'z' * (1 << 20))",
      "                    f.flush()",
      "                    total += 1 << 20",
      "            n += 1",
      "        return [total, 'no error']",
      "    except OSError as exc:",
      "        return [total, errno.errorcode[exc.errno]]",
      "    finally:",
      "        for i in range(n + 1):",
      "            try: os.remove(f'{directory}/f{i}')",
      "            except OSError: pass",
      "try:",
      "    open('/dev/planted', 'w')",
      "    dev = 'writable'",
      "except OSError as exc:",
      "    dev = errno.errorcode[exc.errno]",
      "{'tmp': fill('/tmp', 256 << 20), 'shm': fill('/dev/shm', 256 << 20), 'dev': dev}",
    ].join("\n");
    const outcome = await run(sandbox, code);
    expect(outcome.status).toBe("ok");
    const value = outcome.result?.value as { tmp: [number, string]; shm: [number, string]; dev: string };
    expect(value.tmp[1]).toBe("ENOSPC");
    expect(value.tmp[0]).toBeLessThanOrEqual(64 << 20);
    expect(value.shm[1]).toBe("ENOSPC");
    expect(value.shm[0]).toBeLessThanOrEqual(16 << 20);
    expect(value.dev).toBe("EROFS");
  });
});

describe("a disposed sandbox's cgroup", () => {
  it("is never touched again by that sandbox once released, though the next sandbox may be using it", async (context) => {
    if (withCgroups.runtime.cgroups.mode === "none") context.skip();
    const first = await start(withCgroups, "bash");
    const firstCgroup = (await run(first, "cat /proc/self/cgroup")).stdout.toString();
    await first.dispose();
    // Released cgroups are reused, latest first: the next sandbox gets this one.
    const second = await start(withCgroups, "bash");
    expect((await run(second, "cat /proc/self/cgroup")).stdout.toString()).toBe(firstCgroup);
    await first.dispose();
    first.terminate("killed");
    expect(second.alive).toBe(true);
    expect((await run(second, "echo still here")).stdout.toString()).toBe("still here\n");
  });
});
