// What watches a server's governance events besides the audit: the anomaly rules and the metrics,
// built from the config and subscribed in one place, for `sandgate serve` and tests alike.

import { AnomalyDetector } from "../features/governance/index.js";
import type { ServerContext } from "./context.js";
import { ServerMetrics } from "./metrics.js";

export interface ObserveOptions {
  /** Milliseconds since the epoch for the anomaly rules; tests pass a fake clock. */
  now?: () => number;
  /** The audit log (store's AuditLog): its batch write times feed sandgate_audit_write_seconds. */
  audit?: { onFlush(observer: (rows: number, ms: number) => void): () => void };
}

export interface Observed {
  ctx: ServerContext;
  /** Unsubscribes the detector and the metrics from the events (and from the audit log). */
  stop(): void;
}

/** `ctx` with its anomaly detector and (when metrics.enabled) its metrics, both subscribed to governance.events. */
export function observeServer(ctx: ServerContext, options: ObserveOptions = {}): Observed {
  const { events } = ctx.governance;
  const anomalies = new AnomalyDetector({ config: ctx.config.anomalies, events, ...(options.now ? { now: options.now } : {}) });
  const metrics = ctx.config.metrics.enabled ? new ServerMetrics({ engine: ctx.engine, codeMode: ctx.codeMode, anomalies }) : undefined;
  // Metrics first: an anomaly the detector records while handling an event is counted after it.
  const stops = metrics ? [events.subscribe(metrics.sink)] : [];
  stops.push(events.subscribe(anomalies));
  if (metrics && options.audit) stops.push(options.audit.onFlush(metrics.observeAuditFlush));
  return { ctx: { ...ctx, anomalies, ...(metrics ? { metrics } : {}) }, stop: () => stops.forEach((stop) => void stop()) };
}
