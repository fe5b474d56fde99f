// The server's status, readable without an API key: status.root (GET /, what this is and where to
// go next) and status.health (GET /health, for probes and load balancers: the protections active,
// sessions, capacity, the warm pool and the upstream servers; "degraded" when a pool kind keeps
// failing or an upstream server failed).

import { z } from "zod";
import type { SandgateConfig } from "../../config/index.js";
import type { AdmissionState, Engine } from "../../execution/index.js";
import { defineOperation } from "../../operations/index.js";
import type { UpstreamStatus } from "../codemode/index.js";

/** What the status is read from. */
export interface StatusHost {
  engine: Engine;
  config: SandgateConfig;
  codeMode: { status(): UpstreamStatus[] };
  version: string;
  /** When the server started, milliseconds since the epoch. */
  startedAt: number;
  /** Open MCP sessions, when a surface keeps them (Streamable HTTP); 0 otherwise. */
  mcpSessionCount?: () => number;
}

const none = z.object({});

const rootOutput = z.object({ name: z.string(), version: z.string(), status: z.string(), mcp: z.string(), docs: z.string(), openapi: z.string() });

const healthOutput = z.object({
  status: z.enum(["ok", "degraded"]),
  version: z.string(),
  uptime_s: z.number(),
  sandbox: z.record(z.unknown()),
  sessions: z.object({ active: z.number(), max: z.number() }),
  mcp_sessions: z.number(),
  capacity: z
    .object({ sandboxes: z.number(), max_sandboxes: z.number(), committed_mb: z.number(), max_committed_mb: z.number(), waiting: z.number() })
    .describe("Live sandboxes and their committed memory against the server-wide caps, and calls waiting for room"),
  pool: z.record(z.unknown()),
  upstream: z.array(z.object({ name: z.string(), state: z.string(), tool_count: z.number() })).describe("Upstream MCP servers (error details: list_servers, with the API key)"),
});

function capacityOf(state: AdmissionState): z.infer<typeof healthOutput>["capacity"] {
  return {
    sandboxes: state.sandboxes,
    max_sandboxes: state.maxSandboxes,
    committed_mb: state.committedMb,
    max_committed_mb: state.maxCommittedMb,
    waiting: state.waiting,
  };
}

export const serverRoot = defineOperation({
  id: "status.root",
  summary: "Basic status (no API key needed)",
  scope: "public",
  effects: ["read"],
  idempotent: true,
  input: none,
  output: rootOutput,
  run: async (host: StatusHost) => ({ name: "sandgate", version: host.version, status: "ok", mcp: "/mcp", docs: "/docs", openapi: "/openapi.json" }),
  surfaces: { mcp: null, rest: { method: "get", path: "/", tag: "status", description: null }, sandbox: null },
});

export const serverHealth = defineOperation({
  id: "status.health",
  summary: "Detailed health: protections active, sessions and warm pool (no API key needed)",
  scope: "public",
  effects: ["read"],
  idempotent: true,
  input: none,
  output: healthOutput,
  run: async (host: StatusHost) => {
    const { engine, config } = host;
    const runtime = engine.runtime;
    const pool = engine.poolState();
    const upstream = host.codeMode.status().map((s) => ({ name: s.name, state: s.state, tool_count: s.toolCount }));
    const degraded = Object.values(pool).some((kind) => kind.target > 0 && kind.ready === 0 && kind.failures > 0) || upstream.some((s) => s.state === "failed");
    return {
      status: degraded ? ("degraded" as const) : ("ok" as const),
      version: host.version,
      uptime_s: Math.round((Date.now() - host.startedAt) / 100) / 10,
      sandbox: {
        bubblewrap: runtime.bwrapPath,
        namespaces: ["user", "pid", "network", "ipc", "uts", "mount", "cgroup"],
        seccomp: runtime.seccompFile !== undefined,
        cgroups: runtime.cgroups.mode,
        cgroup_controllers: runtime.cgroups.controllers,
        // Session sandboxes are frozen between calls (threads and timers left running use no CPU).
        freezes_idle_sessions: runtime.cgroups.freezer === true,
        host_user: runtime.hostUser ? runtime.hostUser.uid : process.getuid?.(),
      },
      sessions: { active: engine.sessions.count, max: config.sessions.max },
      mcp_sessions: host.mcpSessionCount?.() ?? 0,
      capacity: capacityOf(engine.admissionState()),
      pool,
      upstream,
    };
  },
  surfaces: { mcp: null, rest: { method: "get", path: "/health", tag: "status", description: null }, sandbox: null },
});
