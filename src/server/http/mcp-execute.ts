// POST /mcp/execute: MCP without an MCP session. Each request carries one JSON-RPC 2.0 message,
// answered by a short-lived MCP server built like the one at /mcp, so both answer alike.

import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { codeOfJsonRpc, ERROR_CODES, httpStatusOf, type ErrorCode } from "../../errors/index.js";
import type { Scope } from "../../config/index.js";
import type { ClientLimiter } from "../client-limiter.js";
import type { ServerContext } from "../context.js";
import { createMcpServer } from "../mcp-server.js";
import { retryAfterSeconds } from "../retry-after.js";
import type { ToolDefinition } from "../tools.js";

export const jsonRpcRequest = z
  .object({
    jsonrpc: z.literal("2.0"),
    id: z.union([z.string(), z.number()]).optional(),
    method: z
      .string()
      .min(1)
      .describe(
        '"tools/call" with params {name, arguments}, or a tool name with the arguments as params; also initialize, ping, tools/list, ' +
          "resources/list, resources/templates/list, resources/read, prompts/list, prompts/get, and notifications (answered 202)",
      ),
    params: z.record(z.unknown()).optional(),
  })
  .strict();

export const jsonRpcResponse = z.union([
  z.object({ jsonrpc: z.literal("2.0"), id: z.union([z.string(), z.number(), z.null()]), result: z.record(z.unknown()) }).strict(),
  z
    .object({
      jsonrpc: z.literal("2.0"),
      id: z.union([z.string(), z.number(), z.null()]),
      error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).strict(),
    })
    .strict(),
]);

/** Methods that are MCP's own; any other method without a "/" is taken as a tool name (the short form). */
const MCP_METHODS = new Set(["initialize", "ping"]);

export interface McpExecuteOptions {
  ctx: ServerContext;
  tools: ToolDefinition[];
  limiter: ClientLimiter;
  owner: string;
  /** What the caller's API key may do; tools outside it are refused. */
  scopes: ReadonlySet<Scope>;
  /** Aborted when the client disconnects: a running tools/call is stopped. */
  signal: AbortSignal;
}

function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_CODES, value);
}

/** The HTTP status of a JSON-RPC error the MCP server sent: its sandgate code's, else its number's. */
function statusOf(error: { code: number; data?: unknown }): number {
  const code = (error.data as { code?: unknown } | undefined)?.code;
  return httpStatusOf(isErrorCode(code) ? code : codeOfJsonRpc(error.code));
}

/** Hands one message to a fresh MCP server and resolves with its answer to `id` (none for a notification). */
async function dispatch(message: JSONRPCMessage, id: RequestId | undefined, options: McpExecuteOptions): Promise<JSONRPCMessage | undefined> {
  const { ctx, tools, limiter, owner, scopes, signal } = options;
  const server = createMcpServer(ctx, { owner, scopes, limiter, requestSignal: () => signal }, tools);
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  try {
    await server.connect(serverSide);
    const answered = new Promise<JSONRPCMessage>((resolve) => {
      client.onmessage = (reply) => {
        if ("id" in reply && reply.id === id && ("result" in reply || "error" in reply)) resolve(reply);
      };
    });
    await client.start();
    await client.send(message);
    return id === undefined ? undefined : await answered;
  } finally {
    await server.close().catch(() => undefined);
  }
}

/**
 * Answers one parsed JSON-RPC request. Errors keep the JSON-RPC shape and take the HTTP status
 * of their code, so plain HTTP clients see a 4xx; a notification is answered 202 with no body.
 */
export async function answerJsonRpc(request: z.infer<typeof jsonRpcRequest>, options: McpExecuteOptions): Promise<Response> {
  const { method, params } = request;
  const isNotification = method.startsWith("notifications/");
  if (isNotification) {
    await dispatch({ jsonrpc: "2.0", method, ...(params ? { params } : {}) }, undefined, options);
    return new Response(null, { status: 202 });
  }
  // A request without an id is still answered (with id null), as this endpoint always has; each
  // message has a server of its own, so any id is unique there.
  const wireId: RequestId = request.id ?? 0;
  const shortForm = !method.includes("/") && !MCP_METHODS.has(method);
  const message: JSONRPCMessage = shortForm
    ? { jsonrpc: "2.0", id: wireId, method: "tools/call", params: { name: method, arguments: params ?? {} } }
    : { jsonrpc: "2.0", id: wireId, method, ...(params ? { params } : {}) };
  const reply = await dispatch(message, wireId, options);
  const id = request.id ?? null;
  if (reply && "error" in reply) {
    const seconds = retryAfterSeconds(reply.error.data as Record<string, unknown> | undefined);
    return json({ jsonrpc: "2.0", id, error: reply.error }, statusOf(reply.error), seconds === undefined ? {} : { "retry-after": String(seconds) });
  }
  return json({ jsonrpc: "2.0", id, result: reply && "result" in reply ? reply.result : {} }, 200);
}

function json(body: z.infer<typeof jsonRpcResponse>, status: number, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}
