// The door: DNS-rebinding protection (Host and Origin checks), the bearer API keys that name
// the caller, and CORS. Runs before any route, so no handler sees a request that should have been refused.

import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { allApiKeys, isLoopbackHost, scopesOfKey, type ServerConfig } from "../../config/index.js";
import { SandgateError } from "../../errors/index.js";
import { keyCaller, LOCAL_CALLER, peerCaller } from "./caller.js";
import { errorResponse } from "./errors.js";

/** Besides the public operations' routes, what anyone may read: the API's docs (they hold no secret). */
const PUBLIC_DOCS = ["/docs", "/openapi.json"];

/** The paths anyone may GET without a key: the routes of operations declared "public" (status, liveness for load balancers) and the docs. */
export function publicPaths(routes: ReadonlyArray<{ method: string; path: string; scope: string }>): ReadonlySet<string> {
  return new Set([...routes.filter((route) => route.scope === "public" && route.method === "get").map((route) => route.path), ...PUBLIC_DOCS]);
}

/**
 * OAuth and OpenID discovery that MCP clients probe before they connect (mcp-remote asks six of
 * them every time), and the default OAuth endpoints the MCP SDK falls back to when discovery finds
 * nothing (/register, /token, /authorize). sandgate has none: they get 404 at once, by any method,
 * with or without a key (a 401 would send a client into an OAuth flow instead of saying the key is
 * wrong), and are not refusals to record (six auth_failure rows per connect would trip the
 * repeated-blocks rule).
 */
const DISCOVERY = /^\/(mcp\/)?(\.well-known\/|(register|token|authorize)\/?$)/;

function hostnameOf(host: string): string {
  // "[::1]:7860" -> "[::1]", "localhost:7860" -> "localhost"
  if (host.startsWith("[")) return host.slice(0, host.indexOf("]") + 1).toLowerCase();
  const colon = host.lastIndexOf(":");
  return (colon === -1 ? host : host.slice(0, colon)).toLowerCase();
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

export interface GuardOptions {
  server: ServerConfig;
  /** What anyone may GET without a key (publicPaths); nothing but OPTIONS when absent. */
  publicPaths?: ReadonlySet<string>;
  /** Told of every request refused for a missing or wrong key (the audit's auth_failure rows). */
  onRefused?: (refusal: { reason: "missing_key" | "invalid_key"; route: string; peer: string }) => Promise<void>;
}

/**
 * Host and Origin validation. Loopback servers accept only loopback host names (plus
 * allowedHosts); a browser Origin must be the server itself or listed.
 */
export function originGuard({ server }: GuardOptions): MiddlewareHandler {
  const loopback = isLoopbackHost(server.host);
  const extraHosts = new Set(server.allowedHosts.map((h) => h.toLowerCase()));
  const checkHost = loopback || extraHosts.size > 0;
  const allowedHost = (host: string): boolean => {
    const name = hostnameOf(host);
    return extraHosts.has(host.toLowerCase()) || extraHosts.has(name) || (loopback && isLoopbackHost(name));
  };
  // Only listed origins: CORS without a list is refused at start (config and assertSafeToServe),
  // and even then no setting makes this check let any origin through.
  const origins = new Set([...server.allowedOrigins, ...server.cors.origins].map((o) => o.replace(/\/$/, "").toLowerCase()));
  return async (c, next) => {
    const host = c.req.header("host") ?? "";
    if (checkHost && !allowedHost(host)) {
      return errorResponse(c, new SandgateError("FORBIDDEN_ORIGIN", `Host header ${JSON.stringify(host)} is not allowed; add it to server.allowedHosts if this name is yours`));
    }
    const origin = c.req.header("origin");
    if (origin !== undefined) {
      let ok = origins.has(origin.replace(/\/$/, "").toLowerCase());
      if (!ok) {
        try {
          const url = new URL(origin);
          // Same origin only: a page on another local port is as foreign as any web site.
          ok = url.host.toLowerCase() === host.toLowerCase();
        } catch {
          ok = false;
        }
      }
      if (!ok) {
        return errorResponse(c, new SandgateError("FORBIDDEN_ORIGIN", `Origin ${JSON.stringify(origin)} is not allowed; add it to server.allowedOrigins to let that site call sandgate`));
      }
    }
    await next();
    return undefined;
  };
}

/**
 * Who the caller is. With API keys (server.apiKeys, server.apiKey as "default") every route but
 * the public ones (GET /, /health, /docs and /openapi.json) needs `Authorization: Bearer <key>`, compared in
 * constant time against every key, and the key's name is the caller. Without keys the server is
 * on loopback only and its one caller is LOCAL_CALLER. Any other header is not an identity.
 */
export function authGuard({ server, publicPaths = new Set(), onRefused }: GuardOptions): MiddlewareHandler {
  const keys = allApiKeys(server).map(([name, key]) => ({ name, digest: digest(key) }));
  return async (c, next) => {
    if (c.req.method !== "OPTIONS" && DISCOVERY.test(c.req.path)) {
      return errorResponse(c, new SandgateError("NOT_FOUND", `no route ${c.req.method} ${c.req.path}: sandgate has no OAuth; send the header Authorization: Bearer <key> when the server has API keys`));
    }
    if (keys.length > 0 && !(publicPaths.has(c.req.path) && c.req.method === "GET") && c.req.method !== "OPTIONS") {
      const header = c.req.header("authorization") ?? "";
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      const presented = digest(match?.[1] ?? "");
      let name: string | undefined;
      // Every key is compared, whether or not one matched already: the time says nothing.
      for (const key of keys) if (timingSafeEqual(presented, key.digest) && name === undefined) name = key.name;
      if (!match?.[1] || name === undefined) {
        await onRefused?.({ reason: header ? "invalid_key" : "missing_key", route: `${c.req.method} ${c.req.path}`, peer: peerCaller(c).id });
        c.header("WWW-Authenticate", 'Bearer realm="sandgate"');
        return errorResponse(
          c,
          new SandgateError("UNAUTHORIZED", header ? "the API key is not valid" : "this server requires an API key: send the header Authorization: Bearer <key>"),
        );
      }
      c.set("caller", keyCaller(name, scopesOfKey(server, name)));
    } else {
      c.set("caller", LOCAL_CALLER);
    }
    await next();
    return undefined;
  };
}

/** CORS headers and preflights for the listed origins, only when enabled; browsers are refused cross-origin otherwise. */
export function corsGuard({ server }: GuardOptions): MiddlewareHandler {
  if (!server.cors.enabled) {
    return async (_c, next) => {
      await next();
    };
  }
  const listed = server.cors.origins.map((o) => o.replace(/\/$/, ""));
  return cors({
    origin: (origin) => (listed.includes(origin.replace(/\/$/, "")) ? origin : null),
    allowMethods: ["GET", "POST", "PUT", "DELETE", "OPTIONS"],
    allowHeaders: ["Content-Type", "Authorization", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-ID", "Accept"],
    exposeHeaders: ["Mcp-Session-Id", "Mcp-Protocol-Version"],
    maxAge: 600,
  });
}
