// Refusals of the door as governance events (auth_failure rows in the audit, a metric), and the
// error a caller gets when its API key lacks the scope a route or tool needs.

import type { Scope } from "../config/index.js";
import { SandgateError } from "../errors/index.js";
import type { AuthFailureEvent } from "../governance/index.js";
import type { ServerContext } from "./context.js";

/**
 * Records a refused request. Awaited, so a flood of bad keys meets the audit's backpressure; a
 * refusal is answered even when the audit cannot take the row (the request was refused anyway).
 */
export async function recordAuthFailure(ctx: Pick<ServerContext, "governance" | "log">, event: Omit<AuthFailureEvent, "kind" | "time">): Promise<void> {
  try {
    await ctx.governance.events.record({ kind: "auth_failure", ...event });
  } catch (error) {
    ctx.log.warn({ err: error, route: event.route }, "could not record an authentication failure");
  }
}

/** FORBIDDEN for a caller whose key lacks `scope`. */
export function missingScope(scope: Scope, what: string): SandgateError {
  return new SandgateError("FORBIDDEN", `this API key may not use ${what}: it needs the scope "${scope}" (server.keyScopes, SANDGATE_KEY_SCOPES)`, {
    data: { scope },
  });
}
