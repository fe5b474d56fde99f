// `sandgate serve`: the HTTP server's lifecycle. Refuses an unauthenticated non-loopback
// bind, listens (port 0 picks a free port), and on close drains MCP sessions and connections.

import type { AddressInfo } from "node:net";
import type { IncomingMessage, Server as HttpServer, ServerOptions, ServerResponse } from "node:http";
import { serve } from "@hono/node-server";
import { allApiKeys, isLoopbackHost, type ServerConfig } from "../config/index.js";
import { SandgateError } from "../errors/index.js";
import type { ServerContext } from "./context.js";
import { createHttpApp } from "./http/app.js";
import { TRANSFER_TIMEOUT_MS } from "./http/file-transfer.js";

export interface RunningServer {
  /** Base URL, e.g. http://127.0.0.1:7860 */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The reasons `serve` must not start with this config; checked before anything listens. */
export function assertSafeToServe(server: ServerConfig): void {
  if (!isLoopbackHost(server.host) && allApiKeys(server).length === 0) {
    throw new SandgateError(
      "CONFIG_INVALID",
      `refusing to listen on ${server.host} without an API key: anyone who can reach it could run code. Set server.apiKeys (SANDGATE_API_KEYS) or server.apiKey (SANDGATE_API_KEY), or bind to 127.0.0.1`,
      { data: { key: "server.apiKey" } },
    );
  }
  // The config schema refuses this too; servers built from a config object in code land here.
  if (server.cors.enabled && server.cors.origins.length === 0) {
    throw new SandgateError(
      "CONFIG_INVALID",
      "refusing to enable CORS without a list of origins: any web page could run code here. List the origins allowed in server.cors.origins (SANDGATE_CORS_ORIGINS, comma-separated)",
      { data: { key: "server.cors.origins" } },
    );
  }
}

/**
 * How long an idle keep-alive connection is kept, and the shorter time the server tells clients.
 * A client that reuses a connection just as the server closes it sees the request fail ("fetch
 * failed", other side closed). Node 20 advertises exactly the time it enforces, and undici (Node's
 * fetch) keeps a connection for that time minus 2 s measured by a clock that advances 0.5 s per
 * timer tick: on a busy host the ticks come late, so its 3 s were more than 5 s and the server had
 * already closed the connection it reused. Advertising 5 s and closing after 65 s leaves a client a
 * minute of slack, and outlasts the 60 s idle timeout of common reverse proxies (nginx, AWS ALB).
 */
export const KEEP_ALIVE_ADVERTISED_S = 5;
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Tells the client the shorter time; Node then omits its own Keep-Alive header. */
function advertiseKeepAlive(_req: IncomingMessage, res: ServerResponse): void {
  if (res.shouldKeepAlive) res.setHeader("keep-alive", `timeout=${KEEP_ALIVE_ADVERTISED_S}`);
}

/**
 * Node's own deadlines, behind the body guard: headers must arrive within bodyTimeoutS and a
 * whole request within a file transfer's deadline (Node answers 408 and closes), checked every second instead of
 * every 30 s, so 200 slow sockets are gone within seconds, not held for Node's default 300 s.
 */
function connectionTimeouts(server: ServerConfig): ServerOptions {
  const bodyMs = server.bodyTimeoutS * 1000;
  return {
    headersTimeout: bodyMs,
    // A file upload may take long; its route cuts a sender silent for bodyTimeoutS, the body guard every other body.
    requestTimeout: Math.max(bodyMs + 5000, TRANSFER_TIMEOUT_MS),
    connectionsCheckingInterval: Math.min(1000, bodyMs),
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
  };
}

/** How long open connections (SSE streams, file transfers) are given to finish when the server stops. */
const CONNECTIONS_GRACE_MS = 2000;

/** `work`, or nothing once `ms` have passed: a stop goes on whatever is stuck. */
function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([work.then(() => undefined, () => undefined), late]).finally(() => clearTimeout(timer));
}

export async function startHttpServer(ctx: ServerContext): Promise<RunningServer> {
  assertSafeToServe(ctx.config.server);
  const { host, port } = ctx.config.server;
  const http = createHttpApp(ctx);
  const server = await new Promise<HttpServer>((resolve, reject) => {
    const s = serve({ fetch: http.app.fetch, hostname: host, port, serverOptions: connectionTimeouts(ctx.config.server) }, () => resolve(s)) as HttpServer;
    s.prependListener("request", advertiseKeepAlive);
    s.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new SandgateError("CONFIG_INVALID", `port ${port} on ${host} is already in use; pick another with --port or SANDGATE_PORT`, { data: { key: "server.port" }, cause: error })
          : error,
      ),
    );
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    close: () =>
      (closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        // Streams still open (SSE, file transfers) end here, whatever else is stuck: their
        // executions see the abort and stop, a transfer's helper is killed with its stream.
        const cut = setTimeout(() => server.closeAllConnections(), CONNECTIONS_GRACE_MS);
        cut.unref();
        await within(http.close(), CONNECTIONS_GRACE_MS);
        server.closeIdleConnections();
        await within(stopped, 2 * CONNECTIONS_GRACE_MS);
        // A request that held on past its connection's end (its handler awaits something stuck) is not waited for.
        server.closeAllConnections();
        clearTimeout(cut);
      })()),
  };
}
