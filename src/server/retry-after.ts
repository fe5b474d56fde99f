// When a refused caller may try again: refusals for load (429s) carry `retry_after` seconds in
// their error data, which HTTP answers also send as a Retry-After header.

import type { SandgateError } from "../errors/index.js";

/** Whole seconds a refused caller should wait, when the error says so (retry_after, or retryAfterS). */
export function retryAfterOf(error: SandgateError): number | undefined {
  const value = error.data.retry_after ?? error.data.retryAfterS;
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.max(1, Math.ceil(value)) : undefined;
}

/** The error's data as clients see it: a retry time is always named retry_after, in whole seconds. */
export function wireErrorData(error: SandgateError): Record<string, unknown> {
  const retry = retryAfterOf(error);
  if (retry === undefined) return error.data;
  const { retryAfterS: _internal, ...data } = error.data;
  return { ...data, retry_after: retry };
}
