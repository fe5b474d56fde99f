// HTTP error responses: every failure is a JSON body {error: {code, message, data}} with the
// status the error table gives its code, host paths scrubbed, and Retry-After on a 429.

import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { httpStatusOf, publicError, SandgateError, type ErrorCode } from "../../errors/index.js";
import type { Logger } from "../../util/logger.js";
import { retryAfterOf, wireErrorData } from "../retry-after.js";

export function errorBody(error: SandgateError): { error: { code: ErrorCode; message: string; data?: Record<string, unknown> } } {
  const shown = publicError(error);
  const data = wireErrorData(shown);
  return { error: { code: shown.code, message: shown.message, ...(Object.keys(data).length > 0 ? { data } : {}) } };
}

export function errorResponse(c: Context, error: SandgateError): Response {
  const retryAfter = retryAfterOf(error);
  if (retryAfter !== undefined) c.header("retry-after", String(retryAfter));
  return c.json(errorBody(error), httpStatusOf(error.code) as ContentfulStatusCode);
}

/** Any thrown value as a SandgateError a client may see; an unexpected one is logged and becomes INTERNAL. */
export function asSandgateError(error: unknown, log: Logger): SandgateError {
  return publicError(error, log);
}

/** Reads the body as JSON; a missing or malformed body is a MALFORMED_REQUEST naming the problem. */
export async function readJsonBody(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") throw new SandgateError("MALFORMED_REQUEST", "the request body is empty; send a JSON object");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new SandgateError("MALFORMED_REQUEST", `the request body is not valid JSON: ${(error as Error).message}`);
  }
}
