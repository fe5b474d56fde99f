// Upstream servers with hostile tool lists: pages that never end, more tools than the cap, a big list
// replaced on tools/list_changed. The listing fails naming the cap, memory stays bounded, sandgate serves on.

import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, upstreamServerSchema } from "../../src/config/index.js";
import { CodeMode } from "../../src/features/codemode/index.js";
import { UpstreamManager } from "../../src/features/codemode/upstream/index.js";
import { sampleRssGrowth } from "../fixtures/samplers.js";
import { text, waitFor } from "../fixtures/upstream/helpers.js";
import { startToolListServer, type ToolListServer } from "../fixtures/upstream/tool-list-server.js";

const STORM = fileURLToPath(new URL("../fixtures/upstream/list-changed-storm.mjs", import.meta.url));
/** RSS growth a bounded listing stays far below (the endless pages would grow it by gigabytes). */
const RSS_BOUND = 300 * 1024 * 1024;
const MiB = 1024 * 1024;

describe("upstream servers whose tool lists break the caps", () => {
  const servers: Record<string, ToolListServer> = {};
  let manager: UpstreamManager;
  let startGrowth = 0;

  beforeAll(async () => {
    servers.bigPages = await startToolListServer({ kind: "endless", pageTools: 4, toolBytes: 2 * MiB });
    servers.manyPages = await startToolListServer({ kind: "endless", pageTools: 100, toolBytes: 16 });
    servers.tooMany = await startToolListServer({ kind: "count", count: 1001 });
    servers.atCap = await startToolListServer({ kind: "count", count: 1000 });
    servers.changesToBigPages = await startToolListServer({ kind: "count", count: 10 });
    servers.changesToBigPages.onChange({ kind: "endless", pageTools: 4, toolBytes: 2 * MiB });
    servers.changesToManyPages = await startToolListServer({ kind: "count", count: 10 });
    servers.changesToManyPages.onChange({ kind: "endless", pageTools: 100, toolBytes: 16 });
    servers.neighbour = await startToolListServer({ kind: "count", count: 5 });
    manager = new UpstreamManager({
      connectTimeoutMs: 30_000,
      defaultCallTimeoutMs: 30_000,
      maxRestarts: 3,
      backoffBaseMs: 50,
      servers: Object.fromEntries(Object.entries(servers).map(([name, s]) => [name, upstreamServerSchema.parse({ url: s.url })])),
    });
    const rss = sampleRssGrowth();
    await manager.start();
    startGrowth = rss.stop();
  });

  afterAll(async () => {
    await manager.close();
    await Promise.all(Object.values(servers).map((s) => s.close()));
  });

  it("an upstream that pages forever with 8 MB pages fails at start-up naming the byte cap, with memory bounded", () => {
    const status = manager.serverStatus("bigPages");
    expect(status?.state).toBe("failed");
    expect(status?.error).toContain("could not start");
    expect(status?.error).toContain("40 MiB of tool definitions (4 times codeMode.maxUpstreamMessageBytes)");
    expect(manager.tools("bigPages")).toEqual([]);
    expect(servers.bigPages!.pagesServed()).toBeLessThan(10);
    expect(startGrowth).toBeLessThan(RSS_BOUND);
  });

  it("an upstream that pages forever with small pages fails at start-up naming codeMode.maxToolsPerServer", () => {
    const status = manager.serverStatus("manyPages");
    expect(status?.state).toBe("failed");
    expect(status?.error).toContain("lists more than 1000 tools (codeMode.maxToolsPerServer)");
    expect(servers.manyPages!.pagesServed()).toBeLessThanOrEqual(11);
  });

  it("an upstream with more tools than codeMode.maxToolsPerServer is refused, one at the cap is served", async () => {
    const status = manager.serverStatus("tooMany");
    expect(status?.state).toBe("failed");
    expect(status?.error).toContain("upstream server `tooMany` lists more than 1000 tools (codeMode.maxToolsPerServer)");
    await expect(manager.callTool("tooMany", "hello", {})).rejects.toThrow(/tooMany.*not available.*codeMode\.maxToolsPerServer/);
    expect(manager.serverStatus("atCap")?.state).toBe("ready");
    expect(manager.tools("atCap")).toHaveLength(1000);
    expect(text(await manager.callTool("atCap", "hello", {}))).toBe("hello");
  });

  it("a tools/list_changed to endless 8 MB pages fails the server naming the cap; memory stays bounded and the others keep working", async () => {
    expect(manager.serverStatus("changesToBigPages")?.state).toBe("ready");
    const rss = sampleRssGrowth();
    expect(text(await manager.callTool("changesToBigPages", "change", {}))).toBe("changed");
    expect(await waitFor(() => manager.serverStatus("changesToBigPages")?.state === "failed", 60_000)).toBe(true);
    const growth = rss.stop();
    const status = manager.serverStatus("changesToBigPages");
    expect(status?.error).toContain("refreshing its tools failed");
    expect(status?.error).toContain("4 times codeMode.maxUpstreamMessageBytes");
    expect(manager.tools("changesToBigPages")).toEqual([]);
    expect(servers.changesToBigPages!.pagesServed()).toBeLessThan(12);
    expect(growth).toBeLessThan(RSS_BOUND);
    expect(text(await manager.callTool("neighbour", "hello", {}))).toBe("hello");
  });

  it("a tools/list_changed to endless small pages fails the server naming codeMode.maxToolsPerServer, and it stays failed", async () => {
    expect(text(await manager.callTool("changesToManyPages", "change", {}))).toBe("changed");
    expect(await waitFor(() => manager.serverStatus("changesToManyPages")?.state === "failed", 60_000)).toBe(true);
    expect(manager.serverStatus("changesToManyPages")?.error).toContain("lists more than 1000 tools (codeMode.maxToolsPerServer)");
    const served = servers.changesToManyPages!.pagesServed();
    await new Promise((resolve) => setTimeout(resolve, 500));
    // No restarts: the server would only list the same tools again.
    expect(servers.changesToManyPages!.pagesServed()).toBe(served);
    expect(manager.serverStatus("changesToManyPages")?.restarts).toBe(0);
    expect(text(await manager.callTool("neighbour", "hello", {}))).toBe("hello");
  });
});

describe("a tools/list_changed that replaces 1,000 tools", () => {
  let dir: string;
  let upstream: ToolListServer | undefined;
  let codeMode: CodeMode | undefined;

  afterEach(async () => {
    await codeMode?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps the event loop serving while the catalog and its tree are rewritten", async () => {
    dir = mkdtempSync(join(tmpdir(), "sandgate-toollists-"));
    upstream = await startToolListServer({ kind: "count", count: 1000 });
    upstream.onChange({ kind: "count", count: 1000 });
    const base = loadConfig({ SANDBOX_DIR: dir });
    codeMode = new CodeMode({ ...base, mcpServers: { big: upstreamServerSchema.parse({ url: upstream.url }) } });
    const startDelay = monitorEventLoopDelay({ resolution: 5 });
    startDelay.enable();
    await codeMode.start();
    startDelay.disable();
    const treeDir = join(codeMode.toolsDir, "servers", "big");
    expect(codeMode.catalog.tools("big")).toHaveLength(1000);
    expect(readdirSync(treeDir).filter((f) => f.startsWith("g0"))).toHaveLength(998);

    const delay = monitorEventLoopDelay({ resolution: 5 });
    const oldFile = join(treeDir, readdirSync(treeDir).find((f) => f.startsWith("g0"))!);
    let swapped = false;
    // Timers that run after the catalog holds the new tools while an old file is still on disk ran
    // while the tree was rewritten; written in one synchronous stretch, it would be done before any.
    let timersWhileRewriting = 0;
    const ticker = setInterval(() => {
      if (swapped && existsSync(oldFile)) timersWhileRewriting++;
    }, 1);
    // Called once the catalog holds the new tools and has queued their files.
    const unsubscribe = codeMode.onCatalogChanged(() => (swapped = true));
    delay.enable();
    try {
      const replaced = (): boolean => codeMode!.catalog.tools("big").some((t) => t.name.startsWith("g1_"));
      expect(text(await codeMode.upstream.callTool("big", "change", {}))).toBe("changed");
      expect(await waitFor(replaced, 30_000)).toBe(true);
      await codeMode.catalog.settled();
      // The loop ran timers while the 2,000 files were written and removed: the writes did not hold it.
      expect(timersWhileRewriting).toBeGreaterThan(0);
      process.stderr.write(
        `[tool-lists] 1,000-tool start-up: longest loop stall ${(startDelay.max / 1e6).toFixed(0)} ms; ` +
          `1,000-tool replacement: longest stall ${(delay.max / 1e6).toFixed(0)} ms, ${timersWhileRewriting} timers ran while the tree was rewritten\n`,
      );
    } finally {
      clearInterval(ticker);
      unsubscribe();
      delay.disable();
    }
    const files = readdirSync(treeDir);
    expect(files.filter((f) => f.startsWith("g0"))).toEqual([]);
    expect(files.filter((f) => f.startsWith("g1"))).toHaveLength(998);
    expect(codeMode.catalog.tools("big")).toHaveLength(1000);
  });
});

describe("an upstream server that announces tool list changes without pause", () => {
  it("has its tools listed about once a second, not back to back", async () => {
    const manager = new UpstreamManager({
      connectTimeoutMs: 15_000,
      defaultCallTimeoutMs: 10_000,
      maxRestarts: 0,
      servers: { storm: { command: process.execPath, args: [STORM], env: {} } },
    });
    let changes = 0;
    manager.onToolsChanged(() => changes++);
    try {
      await manager.start();
      expect(manager.serverStatus("storm")?.state).toBe("ready");
      const before = Number(text(await manager.callTool("storm", "listings", {})));
      // Announced changes are still picked up: the listing after the start-up one arrives.
      expect(await waitFor(() => changes >= 2, 10_000)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const during = Number(text(await manager.callTool("storm", "listings", {}))) - before;
      // About 600 announcements in those 3 s; listed back to back it would be hundreds of listings.
      expect(during).toBeLessThanOrEqual(8);
      expect(manager.serverStatus("storm")?.toolCount).toBe(2);
    } finally {
      await manager.close();
    }
  });
});
