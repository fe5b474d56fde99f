// Turning what the MCP SDK throws during a tool call into SandgateErrors that name the
// server and tool: timeouts, a server that went away, and errors the server answered with.

import { SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { SandgateError } from "../../../errors/index.js";
import { UpstreamLimitError } from "./bounded-fetch.js";

export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : Number(s.toFixed(s < 1 ? 3 : 1))} s`;
}

export function timeoutError(server: string, tool: string, timeoutMs: number): SandgateError {
  return new SandgateError("UPSTREAM_TIMEOUT", `tool \`${server}.${tool}\` timed out after ${formatSeconds(timeoutMs)}`, {
    data: { server, tool, timeoutMs },
  });
}

export function stoppedDuringCallError(server: string, tool: string, detail?: string): SandgateError {
  const suffix = detail ? `: ${detail}` : "";
  return new SandgateError("UPSTREAM_UNAVAILABLE", `upstream server \`${server}\` stopped during the call to \`${tool}\`${suffix}`, {
    data: { server, tool },
  });
}

/** The call's connection was reset because the server sent more than a size cap allows. */
export function limitExceededError(server: string, tool: string, error: UpstreamLimitError): SandgateError {
  return new SandgateError("UPSTREAM_ERROR", `the call to \`${server}.${tool}\` failed: ${error.message}`, { data: { server, tool }, cause: error });
}

/**
 * The SDK prefixes McpError messages with "MCP error <code>: ", on the server (the text goes
 * over the wire with it) and again on the client; the rest is the upstream's text.
 */
function upstreamMessage(error: McpError): string {
  return error.message.replace(/^(?:MCP error -?\d+: )+/, "");
}

/** Maps an error thrown by `Client.callTool` (not by our own timer or abort handling). */
export function callError(server: string, tool: string, error: unknown, timeoutMs: number): SandgateError {
  if (error instanceof SandgateError) return error;
  if (error instanceof UpstreamLimitError) return limitExceededError(server, tool, error);
  if (error instanceof McpError) {
    const code: number = error.code;
    if (code === (ErrorCode.RequestTimeout as number)) return timeoutError(server, tool, timeoutMs);
    if (code === (ErrorCode.ConnectionClosed as number)) return stoppedDuringCallError(server, tool);
    return new SandgateError("UPSTREAM_ERROR", `upstream server \`${server}\` rejected the call to \`${tool}\`: ${upstreamMessage(error)}`, {
      data: { server, tool, upstreamCode: code },
      cause: error,
    });
  }
  if (error instanceof Error && error.name === "ZodError") {
    return new SandgateError("UPSTREAM_ERROR", `upstream server \`${server}\` returned a malformed result for \`${tool}\``, {
      data: { server, tool },
      cause: error,
    });
  }
  return new SandgateError("UPSTREAM_UNAVAILABLE", `upstream server \`${server}\` could not be reached for the call to \`${tool}\`: ${describeFailure(error)}`, {
    data: { server, tool },
    cause: error,
  });
}

/** A one-line reason for a failed start or connection, without stack traces. */
export function describeFailure(error: unknown): string {
  if (error instanceof McpError) return upstreamMessage(error);
  if (error instanceof StreamableHTTPError || error instanceof SseError) {
    // Their messages carry the response body, often an HTML error page, but not the status.
    const body = error.message.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim();
    const status = error.code !== undefined && error.code > 0 ? `HTTP ${error.code}: ` : "";
    return `${status}${body.length > 300 ? `${body.slice(0, 300)}…` : body}`;
  }
  if (error instanceof Error) {
    // fetch() says only "fetch failed"; the reason (ECONNREFUSED, a DNS error, ...) is its cause.
    return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
  }
  return String(error);
}

/**
 * True when an HTTP request failed in a way that means the connection is gone: the server
 * forgot our session (404, or 400 naming the session as some servers answer) or the network
 * failed (fetch() throws a TypeError). Other HTTP errors concern one request only.
 */
export function isConnectionLoss(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) {
    return error.code === 404 || (error.code === 400 && /session/i.test(error.message));
  }
  return error instanceof TypeError;
}
