// When a refused caller may try again: refusals for load (429s) carry `retry_after` seconds in
// their error data, which HTTP answers also send as a Retry-After header.

import type { SandgateError } from "../errors/index.js";
import { toWireGovernanceData } from "../features/governance/index.js";

/**
 * The field of an error's data that says how long to wait, in seconds: the one name every refusal
 * for load uses (sessions, the admission queue, the server's own limits) and the wire carries.
 */
export const RETRY_AFTER_FIELD = "retry_after";

/** Whole seconds to wait, when `data` says so (at least 1). */
export function retryAfterSeconds(data: Record<string, unknown> | undefined): number | undefined {
  const value = data?.[RETRY_AFTER_FIELD];
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.max(1, Math.ceil(value)) : undefined;
}

/** Whole seconds a refused caller should wait, when the error says so. */
export function retryAfterOf(error: SandgateError): number | undefined {
  return retryAfterSeconds(error.data);
}

/**
 * The error's data as clients see it: a retry time is always named retry_after, in whole seconds;
 * findings and governance ids are snake_case like the rest of the wire.
 */
export function wireErrorData(error: SandgateError): Record<string, unknown> {
  const retry = retryAfterOf(error);
  const data = toWireGovernanceData(error.data);
  return retry === undefined ? data : { ...data, [RETRY_AFTER_FIELD]: retry };
}
