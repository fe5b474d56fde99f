// Server-wide caps on live sandboxes and committed memory: bursts queue fairly across owners
// and the excess is refused with 429 + Retry-After, with real sandboxes and a real server.

import { readdirSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import type { ExecutionResult } from "../../src/execution/index.js";
import { createTestEngine, descendantPids, waitFor, type TestEngine } from "../helpers.js";
import { samplePeak } from "../fixtures/samplers.js";
import { jsonApi, startTestServer } from "../server-helpers.js";

/**
 * bubblewrap processes this test process started: one per live sandbox (a session's file helper is
 * not a sandbox, nor is the holder of a session's machine, which runs no code).
 */
function liveSandboxes(): number {
  const parents = new Map<number, number>();
  const commands = new Map<number, string>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      commands.set(Number(entry), `${stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))} ${readFileSync(`/proc/${entry}/cmdline`, "utf8")}`);
    } catch {
      // exited while we looked
    }
  }
  const holders = new Set<number>();
  for (const [pid, command] of commands) {
    if (!command.startsWith("sleep /usr/bin/sleep\0infinity")) continue;
    for (let up = parents.get(pid); up !== undefined && up > 1; up = parents.get(up)) holders.add(up);
  }
  let count = 0;
  for (const [pid, command] of commands) {
    if (command.startsWith("bwrap ") && parents.get(pid) === process.pid && !command.includes("fs_helper") && !holders.has(pid)) count++;
  }
  return count;
}

let fx: TestEngine | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe("global caps on sandboxes and committed memory", () => {
  it("40 parallel stateless calls never commit more memory than the cap; the excess gets 429 with Retry-After and nothing is left behind", async () => {
    // 512 MB at 256 MB a sandbox: two sandboxes at once, pool spares included.
    fx = createTestEngine({ SANDGATE_MAX_COMMITTED_MB: "512", MAX_MEMORY_MB: "256", SANDGATE_QUEUE_WAIT: "1" }, { python: 1, javascript: 1, bash: 1 });
    const server = await startTestServer(fx.engine, fx.config, { maxConcurrentPerClient: 64 });
    const api = jsonApi(() => server.url);
    const engine = fx.engine;
    const committed = samplePeak(() => engine.admissionState().committedMb, 15);
    const peak = samplePeak(liveSandboxes, 15);
    try {
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) => api<ExecutionResult>("/execute", { json: { language: "python", code: `import time\ntime.sleep(0.4)\nprint(${i})` } })),
      );
      const sandboxesPeak = peak.stop();
      expect(sandboxesPeak * 256).toBeLessThanOrEqual(512);
      expect(committed.stop()).toBeLessThanOrEqual(512);
      const ok = replies.filter((r) => r.status === 200);
      const refused = replies.filter((r) => r.status === 429);
      expect(ok.length + refused.length).toBe(40);
      expect(ok.length).toBeGreaterThan(0);
      expect(refused.length).toBeGreaterThan(0);
      for (const r of ok) expect(r.body.status).toBe("ok");
      for (const r of refused) {
        const body = r.body as unknown as { error: { code: string; message: string; data: Record<string, unknown> } };
        expect(body.error.code).toBe("TOO_MANY_REQUESTS");
        expect(body.error.message).toMatch(/limit of \d+ sandboxes \/ 512 MB committed/);
        expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        // One name for the retry time, in the body as in the header.
        expect(body.error.data.retry_after).toBe(Number(r.headers.get("retry-after")));
        expect(body.error.data).not.toHaveProperty("retryAfterS");
      }
      const health = await api<{ capacity: Record<string, number> }>("/health");
      expect(health.body.capacity).toMatchObject({ max_committed_mb: 512, waiting: 0 });
      expect(health.body.capacity.committed_mb).toBeLessThanOrEqual(512);
    } finally {
      committed.stop();
      peak.stop();
      await server.close();
    }
    await fx.close();
    fx = undefined;
    expect(await waitFor(() => descendantPids().length === 0, 5000)).toBe(true);
  }, 120_000);

  it("one owner's 30 queued calls do not starve another owner's single call", async () => {
    fx = createTestEngine({ SANDGATE_MAX_SANDBOXES: "2", SANDGATE_QUEUE_WAIT: "120" }, { python: 0, javascript: 0, bash: 0 });
    const engine = fx.engine;
    const finished: string[] = [];
    const peak = samplePeak(liveSandboxes, 15);
    const run = (owner: string, i: number): Promise<ExecutionResult> =>
      engine.execute({ language: "bash", code: `echo ${owner}${i}`, owner }).then((r) => {
        finished.push(owner);
        return r;
      });
    const flood = Array.from({ length: 30 }, (_, i) => run("A", i));
    expect(await waitFor(() => engine.admissionState().waiting >= 25, 10_000)).toBe(true);
    const single = run("B", 0);
    const results = await Promise.all([...flood, single]);
    expect(peak.stop()).toBeLessThanOrEqual(2);
    for (const r of results) expect(r.status).toBe("ok");
    // Round-robin between owners: B waits for at most one of A's turns per free slot, not for all of A's queue.
    const before = finished.indexOf("B");
    expect(before).toBeGreaterThanOrEqual(0);
    expect(before).toBeLessThanOrEqual(8);
  }, 120_000);

  it("idle session sandboxes count against the cap, and stopping the session makes room", async () => {
    fx = createTestEngine({ SANDGATE_MAX_SANDBOXES: "1", SANDGATE_QUEUE_WAIT: "0.5", SANDGATE_EVICT_IDLE_AFTER: "600" }, { python: 0, javascript: 0, bash: 0 });
    const engine = fx.engine;
    const session = engine.sessions.create();
    const first = await engine.execute({ language: "bash", code: "echo kept", sessionId: session.id });
    expect(first.status).toBe("ok");
    const refused = await engine.execute({ language: "bash", code: "echo refused" }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "TOO_MANY_REQUESTS", data: { maxSandboxes: 1 } });
    // Room comes only when the idle session's sandbox may be evicted (600 s), not after the 0.5 s queue wait.
    expect((refused as { data: { retry_after: number } }).data.retry_after).toBeGreaterThan(590);
    await engine.sessions.stop(session.id);
    const after = await engine.execute({ language: "bash", code: "echo room" });
    expect(after.stdout).toBe("room\n");
  }, 60_000);

  it("a session's sandbox idle past evictIdleAfterS gives way to a waiting call; the session keeps its files and its next call reports the lost state", async () => {
    fx = createTestEngine({ SANDGATE_MAX_SANDBOXES: "1", SANDGATE_QUEUE_WAIT: "10", SANDGATE_EVICT_IDLE_AFTER: "0" }, { python: 0, javascript: 0, bash: 0 });
    const engine = fx.engine;
    const session = engine.sessions.create();
    const first = await engine.execute({ language: "python", code: "open('/workspace/kept.txt', 'w').write('kept')\nx = 41", sessionId: session.id });
    expect(first.status).toBe("ok");
    const stateless = await engine.execute({ language: "bash", code: "echo room" });
    expect(stateless.stdout).toBe("room\n");
    const again = await engine.execute({ language: "python", code: "print(open('/workspace/kept.txt').read())\nprint('x' in globals())", sessionId: session.id });
    expect(again.stdout).toBe("kept\nFalse\n");
    expect(again.stateReset).toBe(true);
    const steady = await engine.execute({ language: "python", code: "y = 1\nprint('steady')", sessionId: session.id });
    expect(steady.stateReset).toBeUndefined();
    expect(liveSandboxes()).toBeLessThanOrEqual(1);
  }, 60_000);

  it("the warm pool fills only within the caps and gives its spares up to waiting callers", async () => {
    fx = createTestEngine({ SANDGATE_MAX_SANDBOXES: "2", SANDGATE_QUEUE_WAIT: "30", MAX_MEMORY_MB: "256" }, { python: 2, javascript: 1, bash: 1 });
    const engine = fx.engine;
    expect(await waitFor(() => engine.admissionState().sandboxes === 2 && liveSandboxes() === 2, 20_000)).toBe(true);
    const peak = samplePeak(liveSandboxes, 15);
    // Bash has at most one spare; the second bash call needs a spare of another kind to give way.
    const results = await Promise.all([1, 2, 3].map((i) => engine.execute({ language: "bash", code: `sleep 0.3; echo ${i}` })));
    expect(results.map((r) => r.stdout)).toEqual(["1\n", "2\n", "3\n"]);
    expect(peak.stop()).toBeLessThanOrEqual(2);
    expect(engine.admissionState().committedMb).toBeLessThanOrEqual(512);
  }, 60_000);

  it("a call asking for more memory than the server commits in total is refused at once", async () => {
    fx = createTestEngine({ SANDGATE_MAX_COMMITTED_MB: "1024", MAX_MEMORY_MB: "2048", SANDGATE_DEFAULT_FLAVOR: "small" }, { python: 0, javascript: 0, bash: 0 });
    await expect(fx.engine.execute({ language: "bash", code: "echo big", memoryMb: 2048 })).rejects.toMatchObject({ code: "LIMIT_EXCEEDED" });
    expect((await fx.engine.execute({ language: "bash", code: "echo fits" })).stdout).toBe("fits\n");
  });

  it("a committed-memory cap below one sandbox of the default flavor is refused at start-up, naming the key", () => {
    expect(() => loadConfig({ SANDGATE_MAX_COMMITTED_MB: "128" })).toThrow(/limits\.maxCommittedMemoryMb/);
  });
});
