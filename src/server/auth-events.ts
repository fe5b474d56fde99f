// Refusals of the door as governance events (auth_failure rows in the audit, a metric), and the
// error a caller gets when its API key lacks the scope a route or tool needs.

import type { Scope } from "../config/index.js";
import { SandgateError } from "../errors/index.js";
import type { AuthFailureEvent, GovernanceEvents } from "../features/governance/index.js";
import { AuthFailureTally } from "./auth-tally.js";
import type { ServerContext } from "./context.js";

/**
 * Records a refused request, counted per caller and reason over a window (auth-tally.ts) so that a
 * flood of bad keys costs the audit two rows per window, not one per request; a refusal is
 * answered even when the audit cannot take the row (the request was refused anyway).
 */
export async function recordAuthFailure(ctx: Pick<ServerContext, "governance" | "log">, event: Omit<AuthFailureEvent, "kind" | "time" | "count" | "since">): Promise<void> {
  try {
    await tallyOf(ctx).record(event);
  } catch (error) {
    ctx.log.warn({ err: error, route: event.route }, "could not record an authentication failure");
  }
}

/** One tally per event fan-out: the HTTP app and the MCP tools of one server count together. */
const tallies = new WeakMap<GovernanceEvents, AuthFailureTally>();

function tallyOf(ctx: Pick<ServerContext, "governance" | "log">): AuthFailureTally {
  const { events } = ctx.governance;
  let tally = tallies.get(events);
  if (!tally) {
    tally = new AuthFailureTally(events, ctx.log);
    tallies.set(events, tally);
  }
  return tally;
}

/** Writes the refusals still being counted (the server is closing, before its audit log). */
export async function flushAuthFailures(ctx: Pick<ServerContext, "governance">): Promise<void> {
  await tallies.get(ctx.governance.events)?.close();
}

/** FORBIDDEN for a caller whose key lacks `scope`. */
export function missingScope(scope: Scope, what: string): SandgateError {
  return new SandgateError("FORBIDDEN", `this API key may not use ${what}: it needs the scope "${scope}" (server.keyScopes, SANDGATE_KEY_SCOPES)`, {
    data: { scope },
  });
}
