// GET /metrics on a real server on port 0 over a real engine with governance: counts of real runs
// scraped and parsed, the audit scope at the door, and anomaly alerts and throttling end to end.

import { describe, expect, it } from "vitest";
import type { AnomaliesConfig, ServerConfig } from "../../src/config/index.js";
import type { GovernanceEvent } from "../../src/features/governance/index.js";
import { observeServer, startHttpServer, type RunningServer } from "../../src/server/index.js";
import { openAuditLog } from "../../src/store/index.js";
import { callTool, connectMcp } from "../fixtures/mcp-client.js";
import { useTestEngine } from "../helpers.js";
import { bearer, expectError, jsonApi, rawRequest, serverContext, type Api } from "../server-helpers.js";

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition: `name{label="value",...} number` lines. */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1] ?? ""] = (l[2] ?? "").replace(/\\n/g, "\n").replace(/\\(["\\])/g, "$1");
    }
    samples.push({ name: m[1] ?? "", labels, value: Number(m[3]) });
  }
  return samples;
}

/** The value of the sample named `name` whose labels include `labels`; undefined when there is none. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

const fx = useTestEngine({}, { python: 1, javascript: 0, bash: 0 }, { governed: true });

interface Served {
  server: RunningServer;
  api: Api;
  events: GovernanceEvent[];
  scrape: (headers?: Record<string, string>) => Promise<Sample[]>;
}

/** A server whose context is observed as `sandgate serve` observes it, with config overrides. */
async function withObservedServer(
  overrides: { server?: Partial<ServerConfig>; anomalies?: Partial<AnomaliesConfig>; metricsEnabled?: boolean; audit?: boolean },
  fn: (served: Served) => Promise<void>,
): Promise<void> {
  const base = serverContext(fx.engine, fx.config, overrides.server ?? {});
  const ctx = {
    ...base,
    config: {
      ...base.config,
      anomalies: { ...base.config.anomalies, ...overrides.anomalies },
      metrics: { enabled: overrides.metricsEnabled ?? true },
    },
  };
  const events: GovernanceEvent[] = [];
  const stopRecording = ctx.governance.events.subscribe({ record: (event) => void events.push(event) });
  const audit = overrides.audit ? openAuditLog(ctx.config) : undefined;
  const stopAudit = audit ? ctx.governance.events.subscribe(audit) : undefined;
  const observed = observeServer(ctx, audit ? { audit } : {});
  const server = await startHttpServer(observed.ctx);
  const api = jsonApi(() => server.url);
  const scrape = async (headers: Record<string, string> = {}): Promise<Sample[]> => {
    const reply = await rawRequest(`${server.url}/metrics`, { headers });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(reply.text);
  };
  try {
    await fn({ server, api, events, scrape });
  } finally {
    await server.close();
    observed.stop();
    stopRecording();
    stopAudit?.();
    await audit?.close();
  }
}

describe("GET /metrics", () => {
  it("counts a Python run that succeeded and one that timed out, with durations, risk and live gauges", async () => {
    await withObservedServer({}, async ({ api, scrape }) => {
      expect((await api("/execute", { json: { language: "python", code: "print('hi')" } })).body).toMatchObject({ status: "ok" });
      const slow = await api("/execute", { json: { language: "python", code: "import time\ntime.sleep(30)", timeout: 1 } });
      expect(slow.body).toMatchObject({ status: "timeout" });
      const samples = await scrape();
      expect(valueOf(samples, "sandgate_executions_total", { language: "python", status: "ok" })).toBe(1);
      expect(valueOf(samples, "sandgate_executions_total", { language: "python", status: "timeout" })).toBe(1);
      expect(valueOf(samples, "sandgate_execution_duration_seconds_count", { language: "python" })).toBe(2);
      expect(valueOf(samples, "sandgate_execution_duration_seconds_sum", { language: "python" })).toBeGreaterThan(0.5);
      expect(valueOf(samples, "sandgate_analysis_risk_count", { language: "python" })).toBe(2);
      expect(valueOf(samples, "sandgate_policy_actions_total", { language: "python", action: "allow" })).toBe(2);
      expect(valueOf(samples, "sandgate_tokens_saved_total", { language: "python" })).toBeGreaterThanOrEqual(0);
      expect(valueOf(samples, "sandgate_warm_pool_target", { runner: "python" })).toBe(1);
      expect(valueOf(samples, "sandgate_sessions_active")).toBe(0);
      expect(valueOf(samples, "sandgate_jobs_running")).toBe(0);
      expect(valueOf(samples, "sandgate_mcp_sessions")).toBe(0);
      expect(valueOf(samples, "sandgate_sandboxes_max")).toBe(fx.config.limits.maxSandboxes);
      // Process metrics come from our own registry, under our prefix.
      expect(valueOf(samples, "sandgate_process_cpu_user_seconds_total")).toBeGreaterThan(0);
      // No label anywhere carries a client or session identity.
      expect(samples.flatMap((s) => Object.values(s.labels)).filter((v) => /^(peer|key|mcp):/.test(v))).toEqual([]);
    });
  });

  it("records MCP tool calls under OpenTelemetry's mcp.server.operation.duration names, open sessions included", async () => {
    await withObservedServer({}, async ({ server, scrape }) => {
      const { client } = await connectMcp(server.url);
      try {
        expect((await callTool(client, "execute_code", { language: "python", code: "1 + 1" })).structuredContent).toMatchObject({ status: "ok" });
        expect((await callTool(client, "execute_code", { language: "python", code: "raise ValueError('no')" })).isError).toBe(true);
        await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toThrow();
        const samples = await scrape();
        const call = { mcp_method_name: "tools/call", gen_ai_tool_name: "execute_code", gen_ai_operation_name: "execute_tool" };
        expect(valueOf(samples, "mcp_server_operation_duration_seconds_count", { ...call, error_type: "" })).toBe(1);
        expect(valueOf(samples, "mcp_server_operation_duration_seconds_count", { ...call, error_type: "tool_error" })).toBe(1);
        expect(valueOf(samples, "mcp_server_operation_duration_seconds_count", { gen_ai_tool_name: "unknown" })).toBe(1);
        expect(samples.some((s) => s.labels.gen_ai_tool_name === "no_such_tool")).toBe(false);
        expect(valueOf(samples, "sandgate_mcp_sessions")).toBe(1);
      } finally {
        await client.close();
      }
    });
  });

  it("needs the audit scope: a key without it gets 403 (and is counted), a key with it scrapes", async () => {
    const keys = { runner: "runner-key-0123456789", auditor: "auditor-key-012345678" };
    await withObservedServer({ server: { apiKeys: keys, keyScopes: { runner: ["execute"], auditor: ["audit"] } } }, async ({ api, scrape, events }) => {
      const refused = expectError(await api("/metrics", { headers: bearer(keys.runner) }), 403, "FORBIDDEN");
      expect(refused.data?.scope).toBe("audit");
      expectError(await api("/metrics"), 401, "UNAUTHORIZED");
      expect(events).toContainEqual(expect.objectContaining({ kind: "auth_failure", client: "key:runner", reason: "missing_scope", scope: "audit" }));
      const samples = await scrape(bearer(keys.auditor));
      expect(valueOf(samples, "sandgate_auth_failures_total", { reason: "missing_scope" })).toBe(1);
      expect(valueOf(samples, "sandgate_auth_failures_total", { reason: "missing_key" })).toBe(1);
    });
  });

  it("times the audit log's batch writes", async () => {
    await withObservedServer({ audit: true }, async ({ api, scrape }) => {
      expect((await api("/execute", { json: { language: "python", code: "2" } })).body).toMatchObject({ status: "ok" });
      // The audit writes its queue on the next turn of the event loop: scrape until the batch shows.
      let samples = await scrape();
      for (let i = 0; i < 100 && (valueOf(samples, "sandgate_audit_rows_written_total") ?? 0) < 1; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        samples = await scrape();
      }
      expect(valueOf(samples, "sandgate_audit_rows_written_total")).toBeGreaterThanOrEqual(1);
      expect(valueOf(samples, "sandgate_audit_write_seconds_count")).toBeGreaterThanOrEqual(1);
    });
  });

  it("is not served when metrics.enabled is false", async () => {
    await withObservedServer({ metricsEnabled: false }, async ({ api }) => {
      expectError(await api("/metrics"), 404, "NOT_FOUND");
    });
  });
});

describe("anomalies through the real server", () => {
  // A window far longer than the test, so that how fast the machine runs cannot matter.
  const burst = { burstExecutions: 3, burstWindowS: 3600 };

  it("a burst of executions records one anomaly event and counts it, without refusing anything when throttling is off", async () => {
    await withObservedServer({ anomalies: burst }, async ({ api, events, scrape }) => {
      for (let i = 0; i < 5; i += 1) expect((await api("/execute", { json: { language: "python", code: `${i}` } })).body).toMatchObject({ status: "ok" });
      const anomalies = events.filter((e) => e.kind === "anomaly");
      expect(anomalies).toEqual([expect.objectContaining({ kind: "anomaly", rule: "burst", client: "local" })]);
      expect(anomalies[0]).not.toHaveProperty("throttledForS");
      const samples = await scrape();
      expect(valueOf(samples, "sandgate_anomalies_total", { rule: "burst" })).toBe(1);
      expect(valueOf(samples, "sandgate_throttled_clients")).toBe(0);
    });
  });

  it("with anomalies.throttleS, refuses the flagged client's executions with 429 and Retry-After, but not its reads", async () => {
    await withObservedServer({ anomalies: { ...burst, throttleS: 120 } }, async ({ api, events, scrape }) => {
      for (let i = 0; i < 4; i += 1) expect((await api("/execute", { json: { language: "python", code: `${i}` } })).status).toBe(200);
      expect(events.filter((e) => e.kind === "anomaly")).toEqual([expect.objectContaining({ rule: "burst", throttledForS: 120 })]);
      const refused = await api("/execute", { json: { language: "python", code: "1" } });
      const error = expectError(refused, 429, "TOO_MANY_REQUESTS");
      expect(error.message).toMatch(/anomaly/);
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(120);
      // The same client over sessionless MCP: the code tool is refused, listing sessions is not.
      const rpc = await api("/mcp/execute", { json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "execute_code", arguments: { language: "python", code: "1" } } } });
      expect(rpc.status).toBe(429);
      expect((rpc.body as { error: { data: { code: string } } }).error.data.code).toBe("TOO_MANY_REQUESTS");
      expect((await api("/sessions")).status).toBe(200);
      expect(valueOf(await scrape(), "sandgate_throttled_clients")).toBe(1);
    });
  });
});
