// What watches a server's governance events besides the audit: the anomaly rules and the metrics,
// built from the config and subscribed in one place, for `sandgate serve` and tests alike.

import { AnomalyDetector } from "../governance/index.js";
import type { ServerContext } from "./context.js";
import { ServerMetrics } from "./metrics.js";

export interface Observed {
  ctx: ServerContext;
  /** Unsubscribes both from the events. */
  stop(): void;
}

/** `ctx` with its anomaly detector and (when metrics.enabled) its metrics, both subscribed to governance.events. */
export function observeServer(ctx: ServerContext, now?: () => number): Observed {
  const { events } = ctx.governance;
  const anomalies = new AnomalyDetector({ config: ctx.config.anomalies, events, ...(now ? { now } : {}) });
  const metrics = ctx.config.metrics.enabled ? new ServerMetrics({ engine: ctx.engine, codeMode: ctx.codeMode, anomalies }) : undefined;
  // Metrics first: an anomaly the detector records while handling an event is counted after it.
  const stops = [...(metrics ? [events.subscribe(metrics.sink)] : []), events.subscribe(anomalies)];
  return { ctx: { ...ctx, anomalies, ...(metrics ? { metrics } : {}) }, stop: () => stops.forEach((stop) => stop()) };
}
