// Upstream servers whose output schemas are the attack: 990 of them relisted without pause, and one whose
// pattern backtracks exponentially on the result. The server keeps serving and its memory stays flat.

import { fileURLToPath } from "node:url";
import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";
import { afterEach, describe, expect, it } from "vitest";
import { UpstreamManager } from "../../src/features/codemode/upstream/index.js";
import { outputProblems } from "../../src/features/codemode/upstream/output-check.js";
import { sampleLoopStall } from "../fixtures/samplers.js";
import { text, waitFor } from "../fixtures/upstream/helpers.js";

const SCHEMA_STORM = fileURLToPath(new URL("../fixtures/upstream/schema-storm.mjs", import.meta.url));
const MB = 1024 * 1024;

function stormManager(env: Record<string, string>): UpstreamManager {
  return new UpstreamManager({
    connectTimeoutMs: 60_000,
    defaultCallTimeoutMs: 30_000,
    maxRestarts: 0,
    servers: { storm: { command: process.execPath, args: [SCHEMA_STORM], env } },
  });
}

function forceGc(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

describe("an upstream whose output schemas are hostile", () => {
  let manager: UpstreamManager | undefined;

  afterEach(async () => {
    await manager?.close();
    manager = undefined;
  });

  it("listing 990 tools with output schemas and announcing changes without pause keeps the event loop serving and the heap flat", async () => {
    manager = stormManager({ STORM_TOOLS: "990", STORM_CHANGE_MS: "5" });
    let listings = 0;
    manager.onToolsChanged(() => listings++);
    await manager.start();
    expect(manager.serverStatus("storm")?.state).toBe("ready");
    expect(manager.tools("storm")).toHaveLength(992);
    const gc = forceGc();
    // Each refresh lists 990 schemas not seen before (the fixture renames their properties every time).
    expect(await waitFor(() => listings >= 2, 30_000)).toBe(true);
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const stall = sampleLoopStall();
    const seen = listings;
    const windowStart = performance.now();
    // Ajv compiled every schema on the loop (18 s a listing here) and kept each validator (100 MB a listing).
    await waitFor(() => listings >= seen + 4, 40_000);
    const longest = stall.stop();
    const windowS = (performance.now() - windowStart) / 1000;
    gc();
    const growth = process.memoryUsage().heapUsed - heapBefore;
    process.stderr.write(`[hostile-schemas] ${listings - seen} refreshes: longest loop stall ${longest.toFixed(0)} ms, heap growth ${(growth / MB).toFixed(1)} MB\n`);
    expect(listings - seen).toBeGreaterThanOrEqual(4);
    expect(longest).toBeLessThan(2000);
    expect(growth).toBeLessThan(15 * MB);
    // About 200 announcements a second are coalesced into refreshes at least a second apart.
    expect(listings - seen).toBeLessThanOrEqual(Math.ceil(windowS) + 1);
  }, 120_000);

  it("a result that its output schema's backtracking pattern would take minutes to reject comes back at once, and other calls are answered meanwhile", async () => {
    manager = stormManager({ STORM_TOOLS: "0" });
    await manager.start();
    expect(manager.serverStatus("storm")?.state).toBe("ready");
    // Under Ajv's `u`-flag regex, 28 characters held the loop 3.4 s and 32 about a minute; 40 is days.
    const stall = sampleLoopStall();
    const [redos, other] = await Promise.all([manager.callTool("storm", "redos", { n: 40 }), manager.callTool("storm", "listings", {})]);
    const longest = stall.stop();
    expect(redos.structuredContent).toEqual({ s: `${"a".repeat(40)}!` });
    expect(text(other)).toBe("1");
    expect(longest).toBeLessThan(1000);
  });
});

describe("the check of a result against an upstream output schema", () => {
  const schema = {
    type: "object",
    properties: { id: { type: "integer" }, tags: { type: "array", items: { type: "string", pattern: "^(a+)+$" } } },
    required: ["id"],
  };

  it("still names a result of the wrong type or missing a required property", () => {
    expect(outputProblems(schema, { id: 1, tags: ["x"] })).toEqual([]);
    expect(outputProblems(schema, { tags: [] })).toEqual(["the result must have property `id`"]);
    expect(outputProblems(schema, { id: "1" })).toEqual(["/id must be integer"]);
    expect(outputProblems(schema, { id: 1, tags: ["a", 2] })).toEqual(["/tags/1 must be string"]);
  });

  it("never evaluates a pattern and stops after a fixed amount of work on a huge or deeply nested result", () => {
    expect(outputProblems(schema, { id: 1, tags: [`${"a".repeat(60)}!`] })).toEqual([]);
    const many = { type: "array", items: { type: "array", items: { type: "integer" } } };
    const huge = Array.from({ length: 1000 }, () => Array.from({ length: 1000 }, () => 1));
    const started = performance.now();
    expect(outputProblems(many, huge)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(500);
    let deep: Record<string, unknown> = { leaf: "x" };
    let deepSchema: Record<string, unknown> = { type: "object", properties: { leaf: { type: "integer" } } };
    for (let i = 0; i < 10_000; i++) {
      deep = { next: deep };
      deepSchema = { type: "object", properties: { next: deepSchema } };
    }
    expect(outputProblems(deepSchema, deep)).toEqual([]);
    // A schema of 200,000 required names and properties, against a result with none of them.
    const names = Array.from({ length: 200_000 }, (_, i) => `k${i}`);
    const wide = { type: "object", required: names, properties: Object.fromEntries(names.map((n) => [n, { type: "string" }])) };
    const checked = performance.now();
    const problems = outputProblems(wide, {});
    expect(performance.now() - checked).toBeLessThan(500);
    expect(problems).toHaveLength(3);
  });
});
