// GET /metrics: the Prometheus text exposition of the server's own registry, for scrapers holding
// an API key with the audit scope; absent when metrics.enabled is false.

import { z } from "zod";
import type { ServerContext } from "../context.js";
import { defineRoute, type RestRoute } from "./define-route.js";

export function metricsRoutes(ctx: ServerContext): RestRoute[] {
  const { metrics } = ctx;
  if (!metrics) return [];
  return [
    defineRoute({
      method: "get",
      path: "/metrics",
      scope: "audit",
      tag: "status",
      summary: "Prometheus metrics: executions, tool calls, policy, approvals, anomalies, sandboxes, sessions (API keys need the audit scope)",
      response: z.string(),
      rawResponse: { contentType: metrics.contentType, description: "Prometheus text exposition format" },
      handle: async ({ c }) => {
        const text = await metrics.text();
        return c.body(text, 200, { "content-type": metrics.contentType });
      },
    }),
  ];
}
