// MCP over Streamable HTTP at /mcp: one SDK transport and one MCP server per MCP session,
// created by `initialize`, closed by DELETE, by idling out, or when sandgate stops.

import { randomUUID } from "node:crypto";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isInitializeRequest, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import type { ClientLimiter } from "../client-limiter.js";
import type { ServerContext } from "../context.js";
import { createMcpServer } from "../mcp-server.js";
import type { ToolDefinition } from "../tools.js";

interface McpHttpSession {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  lastSeen: number;
  /** tools/call ids of this session -> the HTTP request that carried them. */
  callSignals: Map<RequestId, AbortSignal>;
}

function jsonRpcError(status: number, code: number, message: string, id: RequestId | null = null): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id }), {
    status,
    headers: { "content-type": "application/json" },
  });
}

type JsonRpcLike = { method?: unknown; id?: unknown };

export class McpHttpSessions {
  private readonly sessions = new Map<string, McpHttpSession>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly ctx: ServerContext,
    private readonly tools: ToolDefinition[],
    private readonly limiter: ClientLimiter,
  ) {
    const idleMs = ctx.config.server.mcpSessionIdleS * 1000;
    this.sweeper = setInterval(() => void this.sweep(idleMs), Math.min(60_000, Math.max(1000, idleMs / 4)));
    this.sweeper.unref();
  }

  get count(): number {
    return this.sessions.size;
  }

  async handle(c: Context): Promise<Response> {
    const request = c.req.raw;
    const sessionId = c.req.header("mcp-session-id");
    let body: unknown;
    if (request.method === "POST") {
      try {
        body = JSON.parse(await c.req.text());
      } catch (error) {
        return jsonRpcError(400, -32700, `Parse error: the body is not valid JSON (${(error as Error).message})`);
      }
    }
    const messages = (Array.isArray(body) ? body : [body]) as JsonRpcLike[];
    let session = sessionId === undefined ? undefined : this.sessions.get(sessionId);
    if (sessionId !== undefined && !session) {
      return jsonRpcError(404, -32001, `MCP session ${sessionId} not found (it ended or the server restarted); initialize a new one`);
    }
    if (!session) {
      if (request.method !== "POST" || !messages.some((m) => isInitializeRequest(m))) {
        return jsonRpcError(400, -32000, "Bad Request: send initialize first; other requests need the Mcp-Session-Id header it returns");
      }
      const max = this.ctx.config.server.maxMcpSessions;
      if (this.sessions.size >= max) {
        return jsonRpcError(429, -32010, `too many MCP sessions are open (${max}); end unused ones (DELETE /mcp) or wait for idle ones to close`);
      }
      session = await this.open();
    }
    session.lastSeen = Date.now();
    for (const message of messages) {
      if (message && typeof message === "object" && message.method === "tools/call" && (typeof message.id === "string" || typeof message.id === "number")) {
        session.callSignals.set(message.id, request.signal);
      }
    }
    const response = await session.transport.handleRequest(request, { parsedBody: body });
    // An initialize that failed leaves a transport no one can reach again.
    if (session.transport.sessionId === undefined) await session.server.close().catch(() => undefined);
    return response;
  }

  private async open(): Promise<McpHttpSession> {
    const callSignals = new Map<RequestId, AbortSignal>();
    const clientKey = `mcp:${randomUUID()}`;
    const server = createMcpServer(
      this.ctx,
      {
        clientKey,
        limiter: this.limiter,
        requestSignal: (id) => {
          const signal = callSignals.get(id);
          callSignals.delete(id);
          return signal;
        },
      },
      this.tools,
    );
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    const session: McpHttpSession = { transport, server, lastSeen: Date.now(), callSignals };
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    return session;
  }

  private async sweep(idleMs: number): Promise<void> {
    const now = Date.now();
    const idle = [...this.sessions.entries()].filter(([, s]) => now - s.lastSeen > idleMs);
    await Promise.all(idle.map(([id, s]) => this.closeOne(id, s)));
  }

  private async closeOne(id: string, session: McpHttpSession): Promise<void> {
    this.sessions.delete(id);
    await session.server.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.entries()].map(([id, s]) => this.closeOne(id, s)));
  }
}
