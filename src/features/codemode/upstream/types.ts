// The public shapes of the upstream layer: server states, status rows and option bags.
// Kept apart from the classes so callers can import types without pulling in the SDK.

import type { UpstreamServerConfig } from "../../../config/index.js";
import type { Logger } from "../../../util/logger.js";

/** Life cycle of one upstream server, as shown in status. */
export type UpstreamState = "connecting" | "ready" | "failed" | "restarting" | "disabled" | "closed";

/** How sandgate talks to a server; for HTTP servers this is the transport that answered. */
export type UpstreamTransportKind = "stdio" | "streamable-http" | "sse";

export interface UpstreamStatus {
  name: string;
  transport: UpstreamTransportKind;
  state: UpstreamState;
  /** Why the server is not ready (or why it last stopped), with the tail of its stderr. */
  error?: string;
  toolCount: number;
  /** Restart attempts made after the server stopped unexpectedly. */
  restarts: number;
  /** A failed server: when sandgate next tries to start it again (ISO 8601). */
  nextRetryAt?: string;
  /** Process id of a running stdio server. */
  pid?: number;
  serverInfo?: { name: string; version: string };
  instructions?: string;
}

export interface UpstreamManagerOptions {
  servers: Record<string, UpstreamServerConfig>;
  log?: Logger;
  /** Time one server has to start, initialize and list its tools. */
  connectTimeoutMs: number;
  /** Call timeout for servers without their own `timeoutS`. */
  defaultCallTimeoutMs: number;
  /** Restarts of a server that stopped unexpectedly before it is given up. */
  maxRestarts: number;
  /** Name and version sandgate announces to upstream servers. */
  clientInfo?: { name: string; version: string };
  /** First restart delay; doubles on every further attempt up to 30 s (default 500 ms). */
  backoffBaseMs?: number;
  /** First retry of a failed (given-up) server; doubles on every further retry up to retryMaxMs (default 1 s). */
  retryBaseMs?: number;
  /** Longest wait between retries of a failed server (default 5 min); 0 never retries. */
  retryMaxMs?: number;
  /**
   * Largest message a server may send: a stdio line, a JSON body, one SSE event (default 10 MiB);
   * one HTTP response may carry 4 times this. Beyond it the call fails and the connection is reset.
   */
  maxMessageBytes?: number;
  /** Tools one server may list (default 1000); a server listing more, or more than 4 times maxMessageBytes of definitions, is failed. */
  maxToolsPerServer?: number;
}

export interface CallOptions {
  /** Aborting it cancels the call upstream; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Overrides the server's `timeoutS` and the default call timeout. */
  timeoutMs?: number;
}
