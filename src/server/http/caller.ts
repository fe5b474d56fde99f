// Who is calling over HTTP: the verified identity the auth guard puts on the request context,
// on which sessions, MCP sessions and concurrency caps are keyed.

import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context } from "hono";
import { SCOPES, type Scope } from "../../config/index.js";

export interface Caller {
  /**
   * The owner string: "key:<name>" with API keys; without keys "local", the one caller of a server
   * that listens on loopback only (REST, /mcp/execute and every MCP session alike).
   */
  id: string;
  /** The identity comes from an API key, so it is the same on every connection and MCP session. */
  keyed: boolean;
  /** What the caller may do (server.keyScopes); every scope without API keys. */
  scopes: ReadonlySet<Scope>;
}

const EVERY_SCOPE: ReadonlySet<Scope> = new Set(SCOPES);

declare module "hono" {
  interface ContextVariableMap {
    caller: Caller;
  }
}

/** The caller with this API key name and its scopes. */
export function keyCaller(name: string, scopes: ReadonlySet<Scope> = EVERY_SCOPE): Caller {
  return { id: `key:${name}`, keyed: true, scopes };
}

/** An anonymous caller (no API keys configured) of this id: it may do everything. */
export function anonymousCaller(id: string): Caller {
  return { id, keyed: false, scopes: EVERY_SCOPE };
}

/**
 * The caller of a server without API keys. serve refuses to listen off loopback without keys, so
 * whoever reaches it is on this machine: one caller, whichever loopback address, client or MCP
 * session it uses. Per-caller caps then bound the machine's clients together (telling
 * 127.0.0.2 from 127.0.0.3 let one client be as many callers as it liked), and REST and MCP see
 * the same sessions by id.
 */
export const LOCAL_CALLER: Caller = anonymousCaller("local");

/** The TCP peer as a label for refused requests (an IPv4-mapped IPv6 address is shown as IPv4); never an identity. */
export function peerCaller(c: Context): Caller {
  let address: string | undefined;
  try {
    address = getConnInfo(c).remote.address;
  } catch {
    // not served by @hono/node-server (app.request in tests): no socket to ask
  }
  return anonymousCaller(`peer:${(address ?? "unknown").replace(/^::ffff:(?=\d+\.)/, "")}`);
}

/** The verified caller of this request, as the auth guard set it. */
export function callerOf(c: Context): Caller {
  return c.get("caller") ?? LOCAL_CALLER;
}
