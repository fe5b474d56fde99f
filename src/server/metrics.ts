// The server's Prometheus registry (its own, never prom-client's global one): process metrics, the
// event counters (metric-sink.ts), gauges read on each scrape, MCP call durations and audit latency.

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { CodeMode } from "../features/codemode/index.js";
import type { Engine } from "../execution/index.js";
import type { AnomalyDetector } from "../features/governance/index.js";
import { MetricSink } from "./metric-sink.js";

/**
 * OpenTelemetry's bucket boundaries for mcp.server.operation.duration (semantic conventions for
 * MCP), in seconds.
 */
const MCP_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
const AUDIT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

export interface MetricSources {
  engine: Engine;
  codeMode: CodeMode;
  anomalies?: AnomalyDetector;
}

/** One MCP request as OpenTelemetry's mcp.server.operation.duration records it. */
export interface McpOperation {
  /** The JSON-RPC method, "tools/call"; set by server code, never taken from a request. */
  method: string;
  /** The tool called; anything not in the server's own tool list is "unknown". */
  tool?: string;
  /** Absent on success; an error code, or "tool_error" for a result with isError. */
  errorType?: string;
  seconds: number;
}

export class ServerMetrics {
  readonly registry = new Registry();
  /** Subscribe it to governance.events. */
  readonly sink: MetricSink;
  private readonly mcpOperations: Histogram<"mcp_method_name" | "gen_ai_tool_name" | "gen_ai_operation_name" | "error_type">;
  private readonly auditWrites: Histogram;
  private readonly auditRows: Counter;
  private mcpSessions: () => number = () => 0;

  constructor(sources: MetricSources) {
    const { engine, codeMode, anomalies } = sources;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "sandgate_" });
    this.sink = new MetricSink(this.registry, new Set(Object.keys(engine.config.mcpServers)));
    this.mcpOperations = new Histogram({
      name: "mcp_server_operation_duration_seconds",
      help: "MCP request duration as the server sees it (OpenTelemetry mcp.server.operation.duration)",
      labelNames: ["mcp_method_name", "gen_ai_tool_name", "gen_ai_operation_name", "error_type"],
      buckets: MCP_BUCKETS,
      registers,
    });
    this.auditWrites = new Histogram({
      name: "sandgate_audit_write_seconds",
      help: "Time to write one batch of audit rows to the audit log",
      buckets: AUDIT_BUCKETS,
      registers,
    });
    this.auditRows = new Counter({ name: "sandgate_audit_rows_written_total", help: "Rows written to the audit log", registers });

    new Gauge({ name: "sandgate_sandboxes_in_use", help: "Live sandboxes (sessions, stateless calls, warm pool)", registers, collect() {
      this.set(engine.admissionState().sandboxes);
    } });
    new Gauge({ name: "sandgate_sandboxes_max", help: "The server-wide cap on live sandboxes (limits.maxSandboxes)", registers, collect() {
      this.set(engine.admissionState().maxSandboxes);
    } });
    new Gauge({ name: "sandgate_committed_memory_mb", help: "Memory committed to live sandboxes, MiB", registers, collect() {
      this.set(engine.admissionState().committedMb);
    } });
    new Gauge({ name: "sandgate_admission_waiting", help: "Calls waiting for room under the server-wide caps", registers, collect() {
      this.set(engine.admissionState().waiting);
    } });
    new Gauge({ name: "sandgate_warm_pool_ready", help: "Warm sandboxes ready for stateless calls, by runner", labelNames: ["runner"], registers, collect() {
      this.reset();
      for (const [runner, state] of Object.entries(engine.poolState())) this.set({ runner }, state.ready);
    } });
    new Gauge({ name: "sandgate_warm_pool_target", help: "Warm sandboxes the pool keeps, by runner", labelNames: ["runner"], registers, collect() {
      this.reset();
      for (const [runner, state] of Object.entries(engine.poolState())) this.set({ runner }, state.target);
    } });
    new Gauge({ name: "sandgate_sessions_active", help: "Live sessions", registers, collect() {
      this.set(engine.sessions.count);
    } });
    new Gauge({ name: "sandgate_jobs_running", help: "Background jobs running or waiting", registers, collect() {
      this.set(engine.jobs.running);
    } });
    const mcpSessions = (): number => this.mcpSessions();
    new Gauge({ name: "sandgate_mcp_sessions", help: "Open MCP sessions (Streamable HTTP)", registers, collect() {
      this.set(mcpSessions());
    } });
    new Gauge({ name: "sandgate_upstream_servers", help: "Upstream MCP servers by state", labelNames: ["state"], registers, collect() {
      this.reset();
      const counts = new Map<string, number>();
      for (const server of codeMode.status()) counts.set(server.state, (counts.get(server.state) ?? 0) + 1);
      for (const [state, count] of counts) this.set({ state }, count);
    } });
    if (anomalies) {
      new Gauge({ name: "sandgate_throttled_clients", help: "Clients refused for now after an anomaly (anomalies.throttleS)", registers, collect() {
        this.set(anomalies.throttledCount());
      } });
    }
  }

  /** Where the open MCP session count comes from (the HTTP app owns the sessions). */
  watchMcpSessions(count: () => number): void {
    this.mcpSessions = count;
  }

  observeMcpOperation(operation: McpOperation): void {
    const labels = {
      mcp_method_name: operation.method,
      gen_ai_tool_name: operation.tool ?? "",
      gen_ai_operation_name: operation.method === "tools/call" ? "execute_tool" : "",
      error_type: operation.errorType ?? "",
    };
    this.mcpOperations.observe(labels, operation.seconds);
  }

  /**
   * The audit log's flush observer (AuditLog.onFlush): a batch of `rows` written in `ms`. Whoever
   * opens the audit log subscribes it; until then the histogram stays empty.
   */
  readonly observeAuditFlush = (rows: number, ms: number): void => {
    this.auditWrites.observe(ms / 1000);
    this.auditRows.inc(rows);
  };

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
