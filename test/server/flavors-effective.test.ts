// Flavors as this server runs them: sized for data work by default, capped by the host and the
// admin's maximum, shown as capped everywhere, and an out-of-memory hint that never loops.

import { totalmem } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, type SandgateConfig } from "../../src/config/index.js";
import { resolveLimits } from "../../src/sandbox/index.js";
import { describeResult } from "../../src/features/execute/index.js";
import type { WireExecutionResult } from "../../src/server/wire.js";
import { callTool, connectMcp, toolText } from "../fixtures/mcp-client.js";
import { createTestEngine, type TestEngine } from "../helpers.js";
import { withServer } from "../server-helpers.js";

const GIB = 1024 ** 3;

describe("default flavors", () => {
  it("are 1, 2 and 4 GB, and one sandbox never gets more than a quarter of the host's memory", () => {
    const config = loadConfig({ SANDBOX_DIR: "/tmp/x" });
    expect([config.flavors.small?.memoryMb, config.flavors.medium?.memoryMb, config.flavors.large?.memoryMb]).toEqual([1024, 2048, 4096]);
    expect(config.limits.maxMemoryMb).toBeLessThanOrEqual(Math.max(256, totalmem() / 4 / 1024 ** 2));
    expect(resolveLimits(config, { flavor: "large" }).memoryMb).toBeLessThanOrEqual(config.limits.maxMemoryMb);
  });

  it.runIf(totalmem() >= 16 * GIB)("on a host of 16 GB or more a call gets 2 GB by default and 4 GB with flavor large", () => {
    const config = loadConfig({ SANDBOX_DIR: "/tmp/x" });
    expect(resolveLimits(config).memoryMb).toBe(2048);
    expect(resolveLimits(config, { flavor: "large" }).memoryMb).toBe(4096);
  });
});

/** A memory_limit result as the wire carries it. */
function outOfMemory(config: SandgateConfig, message: string, sessionId: string | null = null): string {
  const result: WireExecutionResult = {
    status: "memory_limit",
    exit_code: null,
    stdout: "",
    stderr: "",
    error: { type: "MemoryLimit", message, traceback: "" },
    duration_ms: 10,
    truncated: false,
    session_id: sessionId,
    tool_calls: [],
    tokens: { returned: 0, output: 0, tool_results: 0 },
  };
  return describeResult(result, config);
}

describe("the out-of-memory hint", () => {
  const defaults = loadConfig({ SANDBOX_DIR: "/tmp/x", MAX_MEMORY_MB: "4096" });
  const capped = loadConfig({ SANDBOX_DIR: "/tmp/x", MAX_MEMORY_MB: "256" });

  it.each([
    ["a medium run names only the larger flavor", defaults, "memory limit of 2048 MB reached; the process was killed", null, /flavor "large" \(4096 MB\)\.$/],
    ["a small run names both larger flavors", defaults, "memory limit of 1024 MB reached; the process was killed", null, /flavor "medium" \(2048 MB\) or "large" \(4096 MB\)/],
    ["a session's run says the larger flavor needs a new session", defaults, "memory limit of 2048 MB reached; the process was killed", "s1", /"large" \(4096 MB\) in a new session/],
  ])("%s", (_name, config, message, session, expected) => {
    expect(outOfMemory(config, message, session)).toMatch(expected);
  });

  it.each([
    ["a large run is told smaller pieces, no flavor", defaults, "memory limit of 4096 MB reached; the process was killed"],
    ["with every flavor capped to the same size, no flavor is suggested", capped, "memory limit of 256 MB reached; the process was killed"],
    ["a MemoryError that states no limit, at the default flavor's cap, suggests none either", capped, "MemoryError"],
  ])("%s", (_name, config, message) => {
    const hint = outOfMemory(config, message);
    expect(hint).not.toMatch(/flavor/);
    expect(hint).toMatch(/the most this server gives a sandbox: process the data in smaller pieces/);
  });
});

describe("a server whose maximum caps the flavors", () => {
  let fx: TestEngine;
  beforeAll(() => {
    fx = createTestEngine({ MAX_MEMORY_MB: "512" }, { python: 0, javascript: 0, bash: 0 });
  });
  afterAll(async () => {
    await fx.close();
  });

  it("shows the effective flavors in the security policy, saying what was capped", async () => {
    await withServer(fx, {}, async (_server, api) => {
      const policy = await api<{ flavors: Record<string, { memoryMb: number; note?: string }> }>("/security/policy");
      expect(policy.status).toBe(200);
      expect(policy.body.flavors.large).toMatchObject({ memoryMb: 512, note: "configured 4096 MB, capped by limits.maxMemoryMb" });
      expect(policy.body.flavors.small?.memoryMb).toBe(512);
    });
  });

  it("names the effective flavors in execute_code's description, and a run out of memory is not sent to a flavor that is no larger", async () => {
    await withServer(fx, {}, async (server) => {
      const { client } = await connectMcp(server.url);
      try {
        const { tools } = await client.listTools();
        const description = tools.find((t) => t.name === "execute_code")?.description ?? "";
        expect(description).toContain("small 512 MB, medium 512 MB (default), large 512 MB");
        expect(description).not.toContain("4096");
        const bomb = await callTool(client, "execute_code", {
          language: "python",
          code: "b = bytearray(900 * 1024 * 1024)\nfor i in range(0, len(b), 4096): b[i] = 1",
        });
        expect(bomb.structuredContent.status).toBe("memory_limit");
        const text = toolText(bomb);
        expect(text).toMatch(/Out of memory at 512 MB, the most this server gives a sandbox/);
        expect(text).not.toMatch(/flavor "large"/);
      } finally {
        await client.close();
      }
    });
  }, 60_000);
});
