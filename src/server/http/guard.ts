// The door: DNS-rebinding protection (Host and Origin checks), the bearer API key, and CORS.
// Runs before any route, so no handler ever sees a request that should have been refused.

import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { isLoopbackHost, type ServerConfig } from "../../config/index.js";
import { SandgateError } from "../../errors/index.js";
import { errorResponse } from "./errors.js";

/** Routes anyone may read: liveness for load balancers and monitors. */
const PUBLIC_PATHS = new Set(["/", "/health"]);

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
  const origins = new Set([...server.allowedOrigins, ...server.cors.origins].map((o) => o.replace(/\/$/, "").toLowerCase()));
  const anyOrigin = server.cors.enabled && server.cors.origins.length === 0;
  return async (c, next) => {
    const host = c.req.header("host") ?? "";
    if (checkHost && !allowedHost(host)) {
      return errorResponse(c, new SandgateError("FORBIDDEN_ORIGIN", `Host header ${JSON.stringify(host)} is not allowed; add it to server.allowedHosts if this name is yours`));
    }
    const origin = c.req.header("origin");
    if (origin !== undefined && !anyOrigin) {
      let ok = origins.has(origin.toLowerCase());
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

/** Bearer API key on every route but / and /health, compared in constant time. */
export function apiKeyGuard({ server }: GuardOptions): MiddlewareHandler {
  const expected = server.apiKey === undefined ? undefined : digest(server.apiKey);
  return async (c, next) => {
    if (expected && !(PUBLIC_PATHS.has(c.req.path) && c.req.method === "GET") && c.req.method !== "OPTIONS") {
      const header = c.req.header("authorization") ?? "";
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match?.[1] || !timingSafeEqual(digest(match[1]), expected)) {
        c.header("WWW-Authenticate", 'Bearer realm="sandgate"');
        return errorResponse(
          c,
          new SandgateError("UNAUTHORIZED", header ? "the API key is not valid" : "this server requires an API key: send the header Authorization: Bearer <key>"),
        );
      }
    }
    await next();
    return undefined;
  };
}

/** CORS headers and preflights, only when enabled; browsers are refused cross-origin otherwise. */
export function corsGuard({ server }: GuardOptions): MiddlewareHandler {
  if (!server.cors.enabled) {
    return async (_c, next) => {
      await next();
    };
  }
  const listed = server.cors.origins.map((o) => o.replace(/\/$/, ""));
  return cors({
    origin: (origin) => (listed.length === 0 || listed.includes(origin) ? origin : null),
    allowMethods: ["GET", "POST", "PUT", "DELETE", "OPTIONS"],
    allowHeaders: ["Content-Type", "Authorization", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-ID", "Accept"],
    exposeHeaders: ["Mcp-Session-Id", "Mcp-Protocol-Version"],
    maxAge: 600,
  });
}
