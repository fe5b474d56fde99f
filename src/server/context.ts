// What every server part shares: the engine, the effective config, the logger and start time.

import type { SandgateConfig } from "../config/index.js";
import type { CodeMode } from "../features/codemode/index.js";
import type { Engine } from "../execution/index.js";
import type { AnomalyDetector, Governance } from "../features/governance/index.js";
import type { AuditStore } from "../store/index.js";
import type { Logger } from "../util/logger.js";
import type { ServerMetrics } from "./metrics.js";

export interface ServerContext {
  engine: Engine;
  /** Upstream servers and their catalog; empty when none is configured. */
  codeMode: CodeMode;
  config: SandgateConfig;
  /** Analysis, policy, approvals and events; the same object the engine gates executions with. */
  governance: Governance;
  /** Prometheus metrics served at /metrics; absent when metrics.enabled is false (see observeServer). */
  metrics?: ServerMetrics;
  /** The anomaly rules; the server refuses the executions of a client they throttle. */
  anomalies?: AnomalyDetector;
  /** The audit log the governance events are written to; absent when audit.enabled or security.enabled is false. */
  audit?: AuditStore;
  log: Logger;
  version: string;
  startedAt: number;
  /** Open MCP sessions, for GET /health: set by the HTTP surface that keeps them (createHttpApp); 0 when absent. */
  mcpSessionCount?: () => number;
}
