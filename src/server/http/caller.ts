// Who is calling over HTTP: the verified identity the auth guard puts on the request context,
// on which sessions, MCP sessions and concurrency caps are keyed.

import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context } from "hono";

export interface Caller {
  /**
   * The owner string: "key:<name>" with API keys; without keys "peer:<address>" for REST and
   * "mcp:<random>" per MCP session (set by the MCP route).
   */
  id: string;
  /** The identity comes from an API key, so it is the same on every connection and MCP session. */
  keyed: boolean;
}

declare module "hono" {
  interface ContextVariableMap {
    caller: Caller;
  }
}

/** The caller with this API key name. */
export function keyCaller(name: string): Caller {
  return { id: `key:${name}`, keyed: true };
}

/** The caller as its TCP peer address (an IPv4-mapped IPv6 address is shown as IPv4). */
export function peerCaller(c: Context): Caller {
  let address: string | undefined;
  try {
    address = getConnInfo(c).remote.address;
  } catch {
    // not served by @hono/node-server (app.request in tests): no socket to ask
  }
  return { id: `peer:${(address ?? "unknown").replace(/^::ffff:(?=\d+\.)/, "")}`, keyed: false };
}

/** The verified caller of this request, as the auth guard set it. */
export function callerOf(c: Context): Caller {
  return c.get("caller") ?? peerCaller(c);
}
