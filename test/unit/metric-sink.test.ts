// The metric sink keeps its labels bounded: upstream servers only by their configured names, and
// words from closed sets; a caller's made-up names never become label values.

import { describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import type { GovernanceEvent } from "../../src/features/governance/index.js";
import { MetricSink } from "../../src/server/metric-sink.js";

const base = { time: 0, client: "key:someone", sessionId: "s-123" };

function toolCall(server: string | undefined, outcome: "ok" | "error"): GovernanceEvent {
  return { ...base, kind: "tool_call", tool: `${server ?? "nowhere"}.x`, ...(server ? { server } : {}), action: "allow", outcome, argsBytes: 1, argsHash: "h", durationMs: 250 };
}

async function valuesOf(registry: Registry, name: string): Promise<Array<{ labels: Record<string, string | number>; value: number }>> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  return (await metric.get()).values.map((v) => ({ labels: v.labels as Record<string, string | number>, value: v.value }));
}

describe("metric sink labels", () => {
  it("labels tool calls by configured server only; any other server is unknown", async () => {
    const registry = new Registry();
    const sink = new MetricSink(registry, new Set(["github"]));
    sink.record(toolCall("github", "ok"));
    sink.record(toolCall("github", "error"));
    for (let i = 0; i < 50; i += 1) sink.record(toolCall(`made-up-${i}`, "ok"));
    sink.record(toolCall(undefined, "error"));
    expect(await valuesOf(registry, "sandgate_tool_calls_total")).toEqual(
      expect.arrayContaining([
        { labels: { server: "github", outcome: "ok" }, value: 1 },
        { labels: { server: "github", outcome: "error" }, value: 1 },
        { labels: { server: "unknown", outcome: "ok" }, value: 50 },
        { labels: { server: "unknown", outcome: "error" }, value: 1 },
      ]),
    );
    expect(await valuesOf(registry, "sandgate_tool_calls_total")).toHaveLength(4);
  });

  it("folds a status or rule outside the expected words into other, and never labels by client or session", async () => {
    const registry = new Registry();
    const sink = new MetricSink(registry, new Set());
    sink.record({ ...base, kind: "anomaly", rule: "Burst {evil=\"x\"}", detail: "" });
    sink.record({ ...base, kind: "anomaly", rule: "burst", detail: "" });
    sink.record({
      ...base,
      kind: "execution",
      language: "bash",
      code: "true",
      codeHash: "0",
      risk: 0,
      level: "none",
      action: "allow",
      findings: [],
      status: "Not A Status\n",
      durationMs: 10,
      background: false,
      stdoutBytes: 0,
      stderrBytes: 0,
      tokensReturned: 3,
      tokensInSandbox: 1200,
    });
    expect(await valuesOf(registry, "sandgate_anomalies_total")).toEqual(
      expect.arrayContaining([
        { labels: { rule: "other" }, value: 1 },
        { labels: { rule: "burst" }, value: 1 },
      ]),
    );
    expect(await valuesOf(registry, "sandgate_executions_total")).toEqual([{ labels: { language: "bash", status: "other" }, value: 1 }]);
    expect(await valuesOf(registry, "sandgate_tokens_saved_total")).toEqual([{ labels: { language: "bash" }, value: 1200 }]);
    const text = await registry.metrics();
    expect(text).not.toContain("someone");
    expect(text).not.toContain("s-123");
  });
});
