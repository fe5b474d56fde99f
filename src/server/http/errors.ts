// HTTP error responses: every failure is a JSON body with the status the error table gives its
// code, host paths scrubbed and Retry-After on a 429; REST as {error}, JSON-RPC routes as {jsonrpc, error}.

import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { httpStatusOf, jsonRpcCodeOf, publicError, SandgateError, type ErrorCode } from "../../errors/index.js";
import { retryAfterOf, wireErrorData } from "../retry-after.js";

export function errorBody(error: SandgateError): { error: { code: ErrorCode; message: string; data?: Record<string, unknown> } } {
  const shown = publicError(error);
  const data = wireErrorData(shown);
  return { error: { code: shown.code, message: shown.message, ...(Object.keys(data).length > 0 ? { data } : {}) } };
}

/** Routes that speak JSON-RPC: what the door refuses there is a JSON-RPC error, which MCP clients can read. */
const JSON_RPC_PATHS = new Set(["/mcp", "/mcp/execute"]);

/** The error as this request's answer: a JSON-RPC error on the MCP routes, the REST error body elsewhere. */
export function errorResponse(c: Context, error: SandgateError): Response {
  const retryAfter = retryAfterOf(error);
  if (retryAfter !== undefined) c.header("retry-after", String(retryAfter));
  const status = httpStatusOf(error.code) as ContentfulStatusCode;
  return JSON_RPC_PATHS.has(c.req.path) ? c.json(jsonRpcErrorBody(error), status) : c.json(errorBody(error), status);
}

export interface JsonRpcErrorBody {
  jsonrpc: "2.0";
  id: RequestId | null;
  error: { code: number; message: string; data: Record<string, unknown> };
}

/** The JSON-RPC error object of a SandgateError: the table's number, and the string code in data. */
export function jsonRpcErrorBody(error: SandgateError, id: RequestId | null = null): JsonRpcErrorBody {
  const shown = publicError(error);
  return { jsonrpc: "2.0", id, error: { code: jsonRpcCodeOf(shown.code), message: shown.message, data: { code: shown.code, ...wireErrorData(shown) } } };
}

/** A JSON-RPC error as an HTTP answer, with the status of its code (and Retry-After on a 429). */
export function jsonRpcErrorResponse(error: SandgateError, id: RequestId | null = null): Response {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const retryAfter = retryAfterOf(error);
  if (retryAfter !== undefined) headers["retry-after"] = String(retryAfter);
  return new Response(JSON.stringify(jsonRpcErrorBody(error, id)), { status: httpStatusOf(error.code), headers });
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
