// Upstream MCP clients against real servers: the reference servers over stdio and SSE, and a
// toy server over Streamable HTTP; no mocks. Every test tears down what it started.

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamManager, type UpstreamManagerOptions } from "../../src/features/codemode/upstream/index.js";
import { descendantsOf } from "../../src/features/codemode/upstream/process-tree.js";
import { StderrTail } from "../../src/features/codemode/upstream/stderr-tail.js";
import { descendantPids, freePort, isAlive, recordingLogger, rejection, text, waitFor } from "../fixtures/upstream/helpers.js";
import { startToyServer, type ToyServer } from "../fixtures/upstream/toy-server.js";

const NODE = process.execPath;
const pkg = (path: string): string => fileURLToPath(new URL(`../../node_modules/@modelcontextprotocol/${path}`, import.meta.url));
const EVERYTHING = pkg("server-everything/dist/index.js");
const MEMORY = pkg("server-memory/dist/index.js");
const FILESYSTEM = pkg("server-filesystem/dist/index.js");

const ENV_SECRET = "env-secret-value-7f3a9c";
const HEADER_SECRET = "Bearer header-secret-value-51d2e8";
const CANARY = "SANDGATE_TEST_CANARY_UPSTREAM";

// Failed servers are retried (test/upstream-retry.test.ts); here a failed state must hold still.
const base: Omit<UpstreamManagerOptions, "servers"> = { connectTimeoutMs: 15_000, defaultCallTimeoutMs: 10_000, maxRestarts: 2, retryBaseMs: 600_000 };

describe("reference servers over stdio", () => {
  let manager: UpstreamManager;
  let dir: string;
  const logged = recordingLogger();
  const changes: [string, Tool[]][] = [];

  beforeAll(async () => {
    process.env[CANARY] = "must-not-reach-upstream";
    dir = mkdtempSync(join(tmpdir(), "sandgate-upstream-"));
    manager = new UpstreamManager({
      ...base,
      log: logged.log,
      servers: {
        everything: { command: NODE, args: [EVERYTHING, "stdio"], env: { UPSTREAM_SECRET: ENV_SECRET } },
        memory: { command: NODE, args: [MEMORY], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } },
        filesystem: { command: NODE, args: [FILESYSTEM, dir], env: {} },
        missing: { command: "sandgate-no-such-command-4b1e", args: [], env: {} },
        crashy: { command: NODE, args: ["-e", "console.error('fatal: MISSING_API_KEY is not set'); process.exit(3)"], env: {} },
        off: { command: NODE, args: [EVERYTHING, "stdio"], env: {}, disabled: true },
      },
    });
    manager.onToolsChanged((server, tools) => changes.push([server, tools]));
    await manager.start();
  });

  afterAll(async () => {
    await manager.close();
    delete process.env[CANARY];
    rmSync(dir, { recursive: true, force: true });
  });

  it("starts servers in parallel; one that cannot start fails alone with a useful error", () => {
    const byName = Object.fromEntries(manager.status().map((s) => [s.name, s]));
    expect(byName.everything).toMatchObject({ state: "ready", transport: "stdio", restarts: 0 });
    expect(byName.memory?.state).toBe("ready");
    expect(byName.filesystem?.state).toBe("ready");
    expect(byName.everything?.pid).toBeGreaterThan(0);
    expect(byName.missing).toMatchObject({ state: "failed", toolCount: 0 });
    expect(byName.missing?.error).toContain("ENOENT");
    expect(byName.crashy?.state).toBe("failed");
    expect(byName.crashy?.error).toContain("the process exited before the MCP handshake finished");
    expect(byName.crashy?.error).toContain("fatal: MISSING_API_KEY is not set");
    expect(byName.off).toMatchObject({ state: "disabled", toolCount: 0 });
    expect(byName.off?.pid).toBeUndefined();
    // Every started server reported its tools once, failures with [].
    expect(changes.filter(([s]) => s === "missing")).toEqual([["missing", []]]);
    expect(changes.some(([s, tools]) => s === "memory" && tools.length > 0)).toBe(true);
  });

  it("lists every tool with its schemas, and the server's identity", () => {
    const memoryTools = manager.tools("memory");
    const readGraph = memoryTools.find((t) => t.name === "read_graph");
    expect(readGraph?.outputSchema).toMatchObject({ type: "object" });
    const structured = manager.tools("everything").find((t) => t.name === "get-structured-content");
    expect(structured?.outputSchema?.properties).toHaveProperty("temperature");
    expect(structured?.inputSchema.properties).toHaveProperty("location");
    const status = manager.serverStatus("everything");
    expect(status?.toolCount).toBe(manager.tools("everything").length);
    expect(status?.serverInfo?.name).toBe("mcp-servers/everything");
    expect(status?.instructions).toBeTruthy();
    expect(manager.tools("nobody")).toEqual([]);
  });

  it("returns structuredContent", async () => {
    const weather = await manager.callTool("everything", "get-structured-content", { location: "Chicago" });
    expect(weather.structuredContent).toEqual({ temperature: 36, conditions: "Light rain / drizzle", humidity: 82 });
    await manager.callTool("memory", "create_entities", { entities: [{ name: "sandgate", entityType: "project", observations: ["gateway"] }] });
    const graph = await manager.callTool("memory", "read_graph", {});
    expect(graph.isError).toBeFalsy();
    expect(graph.structuredContent).toMatchObject({ entities: [{ name: "sandgate", entityType: "project" }] });
  });

  it("returns upstream isError results instead of throwing", async () => {
    const denied = await manager.callTool("filesystem", "read_text_file", { path: "/etc/hostname" });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toMatch(/denied|outside/i);
    // The SDK's McpServer (used by the reference servers) answers an unknown tool with isError, not a JSON-RPC error.
    const unknown = await manager.callTool("everything", "no-such-tool", {});
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toContain("no-such-tool");
  });

  it("rejects calls to a server that is not ready, naming it and why", async () => {
    const missing = await rejection(manager.callTool("missing", "anything", {}));
    expect(missing.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(missing.message).toMatch(/^upstream server `missing` is not available: could not start: .*ENOENT/);
    const off = await rejection(manager.callTool("off", "echo", {}));
    expect(off.message).toBe("upstream server `off` is disabled in the configuration");
    const crashy = await rejection(manager.callTool("crashy", "x", {}));
    expect(crashy.message).not.toContain("MISSING_API_KEY"); // stderr stays in status, away from callers
    const nobody = await rejection(manager.callTool("nobody", "x", {}));
    expect(nobody.message).toContain("no upstream server is named `nobody`");
  });

  it("times out a slow call with UPSTREAM_TIMEOUT naming the tool, and the server stays usable", async () => {
    const started = Date.now();
    const error = await rejection(manager.callTool("everything", "trigger-long-running-operation", { duration: 10, steps: 10 }, { timeoutMs: 300 }));
    expect(error.code).toBe("UPSTREAM_TIMEOUT");
    expect(error.message).toBe("tool `everything.trigger-long-running-operation` timed out after 0.3 s");
    expect(Date.now() - started).toBeLessThan(5000);
    const echo = await manager.callTool("everything", "echo", { message: "still here" });
    expect(text(echo)).toBe("Echo: still here");
  });

  it("an AbortSignal cancels the call", async () => {
    const controller = new AbortController();
    const call = manager.callTool("everything", "trigger-long-running-operation", { duration: 10, steps: 10 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(call).rejects.toMatchObject({ name: "AbortError" });
    expect(manager.serverStatus("everything")?.state).toBe("ready");
  });

  it("gives a stdio server its configured env but not sandgate's own environment", async () => {
    const env = JSON.parse(text(await manager.callTool("everything", "get-env", {}))) as Record<string, string>;
    expect(env.UPSTREAM_SECRET).toBe(ENV_SECRET);
    expect(env.PATH).toBeTruthy();
    expect(env[CANARY]).toBeUndefined();
  });

  it("logs names of env vars but never their values", () => {
    const all = logged.lines.join("\n");
    expect(all).toContain("UPSTREAM_SECRET");
    expect(all).not.toContain(ENV_SECRET);
  });

  it("close() kills every server it started", async () => {
    const pids = manager.status().flatMap((s) => (s.pid === undefined ? [] : [s.pid]));
    expect(pids.length).toBe(3);
    await manager.close();
    await manager.close(); // idempotent
    expect(pids.filter(isAlive)).toEqual([]);
    expect(descendantPids()).toEqual([]);
    expect(manager.status().every((s) => s.state === "closed" || s.state === "disabled")).toBe(true);
    expect((await rejection(manager.callTool("everything", "echo", { message: "x" }))).code).toBe("UPSTREAM_UNAVAILABLE");
  });
});

describe("crashes and restarts", () => {
  it("fails the call in flight, restarts with backoff, then gives up after maxRestarts", async () => {
    const manager = new UpstreamManager({
      ...base,
      maxRestarts: 1,
      backoffBaseMs: 300,
      servers: { everything: { command: NODE, args: [EVERYTHING, "stdio"], env: {}, timeoutS: 0.4 } },
    });
    const changes: Tool[][] = [];
    manager.onToolsChanged((_server, tools) => changes.push(tools));
    try {
      await manager.start();
      const first = manager.serverStatus("everything")!;
      expect(first.state).toBe("ready");

      // The server's timeoutS applies when the call gives none.
      const slow = await rejection(manager.callTool("everything", "trigger-long-running-operation", { duration: 5, steps: 5 }));
      expect(slow.message).toBe("tool `everything.trigger-long-running-operation` timed out after 0.4 s");

      const inFlight = rejection(manager.callTool("everything", "trigger-long-running-operation", { duration: 10, steps: 10 }, { timeoutMs: 20_000 }));
      await new Promise((r) => setTimeout(r, 200));
      process.kill(first.pid!, "SIGKILL");
      const lost = await inFlight;
      expect(lost.code).toBe("UPSTREAM_UNAVAILABLE");
      expect(lost.message).toBe("upstream server `everything` stopped during the call to `trigger-long-running-operation`");

      expect(manager.serverStatus("everything")?.state).toBe("restarting");
      const during = await rejection(manager.callTool("everything", "echo", { message: "x" }));
      expect(during.message).toMatch(/^upstream server `everything` is restarting \(restart 1 of 1\)/);

      expect(await waitFor(() => manager.serverStatus("everything")?.state === "ready", 15_000)).toBe(true);
      const second = manager.serverStatus("everything")!;
      expect(second.restarts).toBe(1);
      expect(second.pid).not.toBe(first.pid);
      expect(changes.length).toBeGreaterThanOrEqual(2);
      expect(text(await manager.callTool("everything", "echo", { message: "back" }))).toBe("Echo: back");

      process.kill(second.pid!, "SIGKILL");
      expect(await waitFor(() => manager.serverStatus("everything")?.state === "failed", 10_000)).toBe(true);
      const gone = manager.serverStatus("everything")!;
      expect(gone.error).toContain("gave up after 1 restart");
      expect(gone.toolCount).toBe(0);
      expect(changes.at(-1)).toEqual([]);
      expect(manager.tools("everything")).toEqual([]);
    } finally {
      await manager.close();
    }
    expect(descendantPids()).toEqual([]);
  });

  it("a server that never answers fails after connectTimeoutMs and is killed", async () => {
    const manager = new UpstreamManager({
      ...base,
      connectTimeoutMs: 500,
      servers: { silent: { command: NODE, args: ["-e", "setInterval(() => {}, 1000)"], env: {} } },
    });
    try {
      await manager.start();
      const status = manager.serverStatus("silent")!;
      expect(status.state).toBe("failed");
      expect(status.error).toContain("did not start within 0.5 s");
      expect(await waitFor(() => descendantPids().length === 0, 6000)).toBe(true);
    } finally {
      await manager.close();
    }
  });

  it("close() also kills what a wrapped server left running, and a start cut short by close()", async () => {
    // The sh wrapper starts a background process, then becomes the server (exec).
    const script = 'sleep 300 </dev/null >/dev/null 2>&1 & exec "$0" "$1" stdio';
    const manager = new UpstreamManager({
      ...base,
      servers: {
        wrapped: { command: "/bin/sh", args: ["-c", script, NODE, EVERYTHING], env: {} },
      },
    });
    let helpers: number[] = [];
    try {
      await manager.start();
      const pid = manager.serverStatus("wrapped")!.pid!;
      helpers = descendantsOf(pid).map((p) => p.pid);
      expect(helpers.length).toBe(1);
    } finally {
      await manager.close();
    }
    expect(await waitFor(() => !helpers.some(isAlive), 2000)).toBe(true);

    const cut = new UpstreamManager({ ...base, servers: { late: { command: NODE, args: [EVERYTHING, "stdio"], env: {} } } });
    const starting = cut.start();
    await new Promise((r) => setTimeout(r, 50));
    await cut.close();
    await starting;
    expect(cut.serverStatus("late")?.state).toBe("closed");
    expect(descendantPids()).toEqual([]);
  });

  it("rejects invalid options with CONFIG_INVALID", () => {
    const make = (options: Partial<UpstreamManagerOptions>) => () => new UpstreamManager({ ...base, servers: {}, ...options });
    expect(make({ connectTimeoutMs: 0 })).toThrow(expect.objectContaining({ code: "CONFIG_INVALID" }) as Error);
    expect(make({ servers: { bad: { url: "ftp://x", headers: {} } } })).toThrow(/`bad` is misconfigured/);
  });
});

describe("Streamable HTTP with a toy server", () => {
  let toy: ToyServer;
  let manager: UpstreamManager;
  const logged = recordingLogger();
  const changes: [string, Tool[]][] = [];

  beforeAll(async () => {
    toy = await startToyServer();
    manager = new UpstreamManager({ ...base, log: logged.log, servers: { toy: { url: toy.url, headers: { Authorization: HEADER_SECRET } } } });
    manager.onToolsChanged((server, tools) => changes.push([server, tools]));
    await manager.start();
  });

  afterAll(async () => {
    await manager.close();
    await toy.close();
  });

  it("connects over Streamable HTTP and lists every page of tools", () => {
    expect(manager.serverStatus("toy")).toMatchObject({ state: "ready", transport: "streamable-http", serverInfo: { name: "toy", version: "1.2.3" }, instructions: "toy instructions" });
    expect(manager.tools("toy").map((t) => t.name)).toEqual(["echo", "sleep", "alpha", "beta", "gamma"]);
  });

  it("sends notifications/cancelled upstream when a call times out or is aborted", async () => {
    const timedOut = await rejection(manager.callTool("toy", "sleep", { text: "timeout" }, { timeoutMs: 200 }));
    expect(timedOut.message).toBe("tool `toy.sleep` timed out after 0.2 s");
    const controller = new AbortController();
    const aborted = manager.callTool("toy", "sleep", { text: "abort" }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("caller gave up")), 100);
    await expect(aborted).rejects.toThrow("caller gave up");
    expect(await waitFor(() => toy.cancelled.length === 2)).toBe(true);
    expect(toy.cancelled).toEqual(["timeout", "abort"]);
  });

  it("sends the configured headers and never logs their values", () => {
    expect(toy.requests.length).toBeGreaterThan(0);
    expect(toy.requests.every((r) => r.headers.authorization === HEADER_SECRET)).toBe(true);
    const all = logged.lines.join("\n");
    expect(all).toContain("Authorization");
    expect(all).not.toContain("header-secret-value");
  });

  it("refreshes the tool list on notifications/tools/list_changed", async () => {
    const before = changes.length;
    await toy.addTool("epsilon");
    expect(await waitFor(() => manager.tools("toy").some((t) => t.name === "epsilon"))).toBe(true);
    expect(changes.length).toBeGreaterThan(before);
    expect(changes.at(-1)?.[1].map((t) => t.name)).toContain("epsilon");
    expect(manager.serverStatus("toy")?.toolCount).toBe(6);
    expect(text(await manager.callTool("toy", "epsilon", { text: "new" }))).toBe("epsilon:new");
  });

  it("turns a JSON-RPC error from upstream into UPSTREAM_ERROR with the upstream message", async () => {
    const error = await rejection(manager.callTool("toy", "no_such_tool", {}));
    expect(error.code).toBe("UPSTREAM_ERROR");
    expect(error.message).toBe("upstream server `toy` rejected the call to `no_such_tool`: Unknown tool: no_such_tool");
    expect(error.data).toMatchObject({ server: "toy", tool: "no_such_tool", upstreamCode: -32602 });
  });

  it("reconnects when the HTTP server forgets its session", async () => {
    await toy.dropSessions();
    const lost = await rejection(manager.callTool("toy", "echo", { text: "x" }));
    expect(lost.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(lost.message).toContain("upstream server `toy` could not be reached for the call to `echo`: HTTP 404");
    expect(await waitFor(() => manager.serverStatus("toy")?.state === "ready", 10_000)).toBe(true);
    expect(manager.serverStatus("toy")?.restarts).toBe(1);
    expect(text(await manager.callTool("toy", "echo", { text: "again" }))).toBe("echo:again");
  });

  it("ends its HTTP session on close()", async () => {
    await manager.close();
    expect(toy.requests.some((r) => r.method === "DELETE")).toBe(true);
    expect(manager.serverStatus("toy")?.state).toBe("closed");
  });
});

describe("SSE fallback with the reference server's SSE mode", () => {
  let child: ChildProcess;
  let url: string;

  beforeAll(async () => {
    const port = await freePort();
    child = spawn(NODE, [EVERYTHING, "sse"], { env: { PATH: process.env.PATH, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await waitFor(() => stderr.includes("Server is running"), 10_000)).toBe(true);
    url = `http://127.0.0.1:${port}/sse`;
  });

  afterAll(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await exited;
    }
  });

  it("falls back to SSE when Streamable HTTP is refused; a pinned transport does not fall back", async () => {
    const manager = new UpstreamManager({
      ...base,
      servers: {
        auto: { url, headers: {} },
        pinnedSse: { type: "sse", url, headers: {} },
        pinnedHttp: { type: "streamable-http", url, headers: {} },
      },
    });
    try {
      await manager.start();
      expect(manager.serverStatus("auto")).toMatchObject({ state: "ready", transport: "sse" });
      expect(manager.serverStatus("pinnedSse")).toMatchObject({ state: "ready", transport: "sse" });
      const pinned = manager.serverStatus("pinnedHttp")!;
      expect(pinned).toMatchObject({ state: "failed", transport: "streamable-http" });
      expect(pinned.error).toContain("404");
      expect(text(await manager.callTool("auto", "echo", { message: "over sse" }))).toBe("Echo: over sse");
      const weather = await manager.callTool("auto", "get-structured-content", { location: "New York" });
      expect(weather.structuredContent).toMatchObject({ temperature: 33 });
    } finally {
      await manager.close();
    }
  });
});

describe("stderr tail", () => {
  it("keeps only the last 4 KB, starting at a whole line", () => {
    const tail = new StderrTail();
    for (let i = 0; i < 500; i++) tail.push(`line ${i} ${"x".repeat(20)}\n`);
    const kept = tail.text();
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(4096);
    expect(kept.startsWith("line ")).toBe(true);
    expect(kept.endsWith(`line 499 ${"x".repeat(20)}`)).toBe(true);
  });
});
