// Failed upstream servers are retried with backoff: a server that fails a few times then works comes back
// without a restart of sandgate; calls meanwhile fail fast naming the next retry; nothing is left running.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UpstreamManager, type UpstreamManagerOptions } from "../../src/features/codemode/upstream/index.js";
import { startCodeModeStack } from "../fixtures/code-mode-stack.js";
import { descendantPids, rejection, text, waitFor } from "../fixtures/upstream/helpers.js";

const NODE = process.execPath;
const CRASHING = fileURLToPath(new URL("../fixtures/upstream/crash-after-ready.mjs", import.meta.url));
const EVERYTHING = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));
const base: Omit<UpstreamManagerOptions, "servers"> = { connectTimeoutMs: 15_000, defaultCallTimeoutMs: 10_000, maxRestarts: 0 };

/** A server that exits with an error on its first `failures` starts (counted in `counter`), then is server-everything. */
function flaky(counter: string, failures: number): UpstreamManagerOptions["servers"][string] {
  const script = `n=$(cat "$1" 2>/dev/null || echo 0); echo $((n+1)) > "$1"; if [ "$n" -lt ${failures} ]; then echo "not yet: start $n" >&2; exit 3; fi; exec "$2" "$3" stdio`;
  return { command: "/bin/sh", args: ["-c", script, "flaky", counter, NODE, EVERYTHING], env: {} };
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-retry-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("a failed upstream server", () => {
  it("is retried with backoff until it works, and calls meanwhile fail fast naming the next retry", async () => {
    const counter = join(dir, "starts");
    const manager = new UpstreamManager({ ...base, retryBaseMs: 200, retryMaxMs: 800, servers: { flaky: flaky(counter, 3) } });
    const changes: Tool[][] = [];
    manager.onToolsChanged((_server, tools) => changes.push(tools));
    try {
      await manager.start();
      const failed = manager.serverStatus("flaky")!;
      expect(failed.state).toBe("failed");
      expect(failed.error).toContain("not yet: start 0");
      expect(Date.parse(failed.nextRetryAt!)).toBeGreaterThan(Date.now() - 1000);

      const fast = await rejection(manager.callTool("flaky", "echo", { message: "x" }));
      expect(fast.code).toBe("UPSTREAM_UNAVAILABLE");
      expect(fast.message).toMatch(/^upstream server `flaky` is not available: could not start: .*; sandgate retries it in \d+ s \(at \d{4}-\d\d-\d\dT[\d:.]+Z\)$/);
      expect(fast.data).toMatchObject({ server: "flaky", state: "failed", nextRetryAt: expect.any(String) });

      expect(await waitFor(() => manager.serverStatus("flaky")?.state === "ready", 20_000)).toBe(true);
      expect(readFileSync(counter, "utf8").trim()).toBe("4");
      const back = manager.serverStatus("flaky")!;
      expect(back.nextRetryAt).toBeUndefined();
      expect(back.error).toBeUndefined();
      expect(back.toolCount).toBeGreaterThan(0);
      expect(changes.at(-1)!.length).toBe(back.toolCount);
      expect(text(await manager.callTool("flaky", "echo", { message: "back" }))).toBe("Echo: back");

      // Given up again after a crash (maxRestarts 0), it is retried again and comes back.
      process.kill(back.pid!, "SIGKILL");
      expect(await waitFor(() => manager.serverStatus("flaky")?.state === "failed", 10_000)).toBe(true);
      expect(manager.serverStatus("flaky")!.error).toContain("gave up after 0 restarts");
      expect(manager.serverStatus("flaky")!.nextRetryAt).toBeDefined();
      expect(await waitFor(() => manager.serverStatus("flaky")?.state === "ready", 20_000)).toBe(true);
      expect(manager.serverStatus("flaky")!.pid).not.toBe(back.pid);
    } finally {
      await manager.close();
    }
    expect(manager.serverStatus("flaky")).toMatchObject({ state: "closed" });
    expect(manager.serverStatus("flaky")!.nextRetryAt).toBeUndefined();
    expect(await waitFor(() => descendantPids().length === 0, 5000)).toBe(true);
  });

  it("that keeps failing is retried again and again, never waiting longer than the cap, until close()", async () => {
    const counter = join(dir, "starts");
    const cap = 200;
    const manager = new UpstreamManager({ ...base, retryBaseMs: 50, retryMaxMs: cap, servers: { broken: flaky(counter, 1_000_000) } });
    try {
      await manager.start();
      const waits: number[] = [];
      let last = "";
      // Record the wait planned after each failed attempt.
      expect(
        await waitFor(() => {
          const status = manager.serverStatus("broken")!;
          if (status.nextRetryAt !== undefined && status.nextRetryAt !== last) {
            last = status.nextRetryAt;
            waits.push(Date.parse(status.nextRetryAt) - Date.now());
          }
          return waits.length >= 6;
        }, 20_000),
      ).toBe(true);
      expect(Math.max(...waits)).toBeLessThanOrEqual(cap);
      expect(manager.serverStatus("broken")!.error).toMatch(/retry \d+ failed: /);
    } finally {
      await manager.close();
    }
    const starts = readFileSync(counter, "utf8");
    // Over twice the longest wait: a retry still planned would have started by now.
    await new Promise((r) => setTimeout(r, 2 * cap + 100));
    expect(readFileSync(counter, "utf8")).toBe(starts);
    expect(manager.serverStatus("broken")!.nextRetryAt).toBeUndefined();
    expect(await waitFor(() => descendantPids().length === 0, 5000)).toBe(true);
  });

  it("that comes back on every retry only to crash again waits longer each time, not the first wait forever", async () => {
    const counter = join(dir, "starts");
    const first = 50;
    const manager = new UpstreamManager({ ...base, retryBaseMs: first, retryMaxMs: 60_000, servers: { crashing: { command: NODE, args: [CRASHING, counter], env: {} } } });
    const readied: number[] = [];
    manager.onToolsChanged((_server, tools) => {
      if (tools.length > 0) readied.push(tools.length);
    });
    try {
      await manager.start();
      const waits: number[] = [];
      let last = "";
      expect(
        await waitFor(() => {
          const status = manager.serverStatus("crashing")!;
          if (status.nextRetryAt !== undefined && status.nextRetryAt !== last) {
            last = status.nextRetryAt;
            waits.push(Date.parse(status.nextRetryAt) - Date.now());
          }
          return waits.length >= 5;
        }, 30_000),
      ).toBe(true);
      // Each retry found the server ready before it crashed again.
      expect(readied.length).toBeGreaterThanOrEqual(5);
      expect(manager.serverStatus("crashing")!.error).toContain("gave up after 0 restarts");
      // 50 ms doubling (±20%): the fifth wait is about 0.8 s, far over the first wait's 60 ms at most.
      expect(waits[4]).toBeGreaterThan(4 * first * 1.2);
    } finally {
      await manager.close();
    }
    expect(await waitFor(() => descendantPids().length === 0, 5000)).toBe(true);
  });

  it("is not retried when retryMaxMs is 0, and says so", async () => {
    const manager = new UpstreamManager({ ...base, retryMaxMs: 0, servers: { broken: flaky(join(dir, "starts"), 1_000_000) } });
    try {
      await manager.start();
      expect(manager.serverStatus("broken")!.nextRetryAt).toBeUndefined();
      const error = await rejection(manager.callTool("broken", "echo", {}));
      expect(error.message).toMatch(/; it is not retried$/);
    } finally {
      await manager.close();
    }
  });
});

describe("list_servers through the real server", () => {
  it("shows a failed server's next retry, then the server with its tools once it came back", async () => {
    const stack = await startCodeModeStack(dir, {
      servers: { flaky: flaky(join(dir, "starts"), 1) },
      codeMode: { retryFailedS: 2, retryFailedMaxS: 60 },
      pool: { python: 0, javascript: 0, bash: 0 },
      name: "retry-test",
    });
    type Listed = { servers: { name: string; state: string; tool_count: number; next_retry_at?: string; error?: string }[] };
    const list = async (): Promise<Listed["servers"][number]> => {
      const result = await stack.client.callTool({ name: "list_servers", arguments: {} });
      return (result.structuredContent as Listed).servers.find((s) => s.name === "flaky")!;
    };
    try {
      const failed = await list();
      expect(failed).toMatchObject({ state: "failed", tool_count: 0 });
      expect(Date.parse(failed.next_retry_at!)).toBeGreaterThan(Date.now());
      let back = failed;
      for (let i = 0; i < 200 && back.state !== "ready"; i++) {
        await new Promise((r) => setTimeout(r, 100));
        back = await list();
      }
      expect(back.state).toBe("ready");
      expect(back.next_retry_at).toBeUndefined();
      expect(back.tool_count).toBeGreaterThan(0);
      const found = await stack.client.callTool({ name: "search_tools", arguments: { query: "echo", server: "flaky", detail: "name" } });
      expect(JSON.stringify(found.structuredContent)).toContain("flaky.echo");
    } finally {
      await stack.close();
    }
    expect(await waitFor(() => descendantPids().length === 0, 5000)).toBe(true);
  });
});
