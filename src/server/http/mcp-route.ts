// MCP over Streamable HTTP at /mcp: one SDK transport and one MCP server per MCP session,
// created by `initialize`, owned by the caller that sent it, closed by DELETE, by idling out,
// by never making a tool call, by eviction at the cap, or when sandgate stops.

import { randomUUID } from "node:crypto";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isInitializeRequest, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import type { ClientLimiter } from "../client-limiter.js";
import type { ServerContext } from "../context.js";
import { createMcpServer } from "../mcp-server.js";
import type { ToolDefinition } from "../tools.js";
import { SandgateError } from "../../errors/index.js";
import { callerOf, type Caller } from "./caller.js";
import { jsonRpcErrorResponse } from "./errors.js";

interface McpHttpSession {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  /** Who opened it: an API key's caller, or LOCAL_CALLER without keys. It owns no sandgate session or job. */
  caller: Caller;
  createdAt: number;
  lastSeen: number;
  /** tools/call requests made; a session that makes none is closed after server.mcpUnusedSessionS. */
  calls: number;
  /** tools/call requests running now; a session with one is never evicted. */
  inFlight: number;
  /**
   * Open GET streams (the client listening for server messages): a client that holds one is
   * still there, so it is not closed as unused however long it waits before its first call.
   */
  streams: number;
  /** tools/call ids of this session -> the HTTP request that carried them. */
  callSignals: Map<RequestId, AbortSignal>;
}

/** Seconds a client refused because every session is busy is told to wait. */
const BUSY_RETRY_AFTER_S = 5;

type JsonRpcLike = { method?: unknown; id?: unknown };

export class McpHttpSessions {
  private readonly sessions = new Map<string, McpHttpSession>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly stopping = new Set<Promise<void>>();

  constructor(
    private readonly ctx: ServerContext,
    private readonly tools: ToolDefinition[],
    private readonly limiter: ClientLimiter,
  ) {
    const { mcpSessionIdleS, mcpUnusedSessionS } = ctx.config.server;
    const idleMs = mcpSessionIdleS * 1000;
    const unusedMs = mcpUnusedSessionS * 1000;
    const every = Math.min(60_000, Math.max(250, Math.min(idleMs, unusedMs) / 4));
    this.sweeper = setInterval(() => void this.sweep(idleMs, unusedMs), every);
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
        return jsonRpcErrorResponse(new SandgateError("MALFORMED_REQUEST", `Parse error: the body is not valid JSON (${(error as Error).message})`));
      }
    }
    const messages = (Array.isArray(body) ? body : [body]) as JsonRpcLike[];
    const caller = callerOf(c);
    let session = sessionId === undefined ? undefined : this.sessions.get(sessionId);
    // Another key's session is answered like one that does not exist.
    if (session && session.caller.keyed && session.caller.id !== caller.id) session = undefined;
    if (sessionId !== undefined && !session) {
      return jsonRpcErrorResponse(new SandgateError("MCP_SESSION_NOT_FOUND", `MCP session ${sessionId} not found (it ended or the server restarted); initialize a new one`));
    }
    if (!session) {
      if (request.method !== "POST" || !messages.some((m) => isInitializeRequest(m))) {
        return jsonRpcErrorResponse(new SandgateError("MCP_SESSION_REQUIRED", "Bad Request: send initialize first; other requests need the Mcp-Session-Id header it returns"));
      }
      const refused = this.makeRoom(caller);
      if (refused) return refused;
      session = await this.open(caller);
    }
    session.lastSeen = Date.now();
    if (request.method === "GET") this.watchStream(session, request.signal);
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

  private watchStream(session: McpHttpSession, signal: AbortSignal): void {
    if (signal.aborted) return;
    session.streams++;
    signal.addEventListener(
      "abort",
      () => {
        session.streams--;
        session.lastSeen = Date.now();
      },
      { once: true },
    );
  }

  /**
   * Frees a place for a new session of `caller`, or answers 429 when none can be freed. Clients
   * that vanish without DELETE (most do) must not lock everyone out: at a cap the least recently
   * used idle session is closed. A caller first gives up its own, so it cannot push others out.
   * Closing one ends only the protocol session: the caller's sandgate sessions and jobs are its
   * caller's, not the MCP session's, and stay.
   */
  private makeRoom(caller: Caller): Response | undefined {
    const { maxMcpSessions, maxMcpSessionsPerIdentity } = this.ctx.config.server;
    const perCaller = Math.min(maxMcpSessionsPerIdentity, maxMcpSessions);
    const own = [...this.sessions.entries()].filter(([, s]) => s.caller.id === caller.id);
    if (own.length >= perCaller && !this.evictIdle(own, "its caller opened more sessions than server.maxMcpSessionsPerIdentity")) {
      return jsonRpcErrorResponse(
        new SandgateError(
          "TOO_MANY_REQUESTS",
          `all ${own.length} MCP sessions of this caller are running tool calls (the most one caller may hold); end unused ones (DELETE /mcp) or retry when a call has finished`,
          { data: { limit: perCaller, retry_after: BUSY_RETRY_AFTER_S } },
        ),
      );
    }
    if (this.sessions.size >= maxMcpSessions && !this.evictIdle([...this.sessions.entries()], "sandgate reached server.maxMcpSessions")) {
      return jsonRpcErrorResponse(
        new SandgateError("TOO_MANY_REQUESTS", `all ${this.sessions.size} MCP sessions (server.maxMcpSessions) are running tool calls; retry when a call has finished`, {
          data: { limit: maxMcpSessions, retry_after: BUSY_RETRY_AFTER_S },
        }),
      );
    }
    return undefined;
  }

  /** Closes the least recently used of `candidates` that has no call running; false when all are busy. */
  private evictIdle(candidates: [string, McpHttpSession][], why: string): boolean {
    let victim: [string, McpHttpSession] | undefined;
    for (const entry of candidates) {
      if (entry[1].inFlight === 0 && (!victim || entry[1].lastSeen < victim[1].lastSeen)) victim = entry;
    }
    if (!victim) return false;
    this.ctx.log.info({ idleS: Math.round((Date.now() - victim[1].lastSeen) / 1000) }, `closing the least recently used idle MCP session: ${why}`);
    this.track(this.closeOne(victim[0], victim[1]));
    return true;
  }

  private async open(caller: Caller): Promise<McpHttpSession> {
    const callSignals = new Map<RequestId, AbortSignal>();
    const server = createMcpServer(
      this.ctx,
      {
        owner: caller.id,
        scopes: caller.scopes,
        limiter: this.limiter,
        onCall: () => {
          session.calls++;
          session.inFlight++;
          return () => {
            session.inFlight--;
            session.lastSeen = Date.now();
          };
        },
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
        this.forget(id, session);
      },
    });
    const session: McpHttpSession = { transport, server, caller, createdAt: Date.now(), lastSeen: Date.now(), calls: 0, inFlight: 0, streams: 0, callSignals };
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.forget(transport.sessionId, session);
    };
    await server.connect(transport);
    return session;
  }

  /** Drops a closed session (its caller's sandgate sessions and jobs are not its own and stay). */
  private forget(id: string, session: McpHttpSession): void {
    if (this.sessions.get(id) === session) this.sessions.delete(id);
  }

  private track(work: Promise<void>): void {
    const done = work.finally(() => this.stopping.delete(done));
    this.stopping.add(done);
  }

  private async sweep(idleMs: number, unusedMs: number): Promise<void> {
    const now = Date.now();
    const stale = [...this.sessions.entries()].filter(
      ([, s]) => s.inFlight === 0 && (now - s.lastSeen > idleMs || (s.calls === 0 && s.streams === 0 && now - s.createdAt > unusedMs)),
    );
    await Promise.all(stale.map(([id, s]) => this.closeOne(id, s)));
  }

  private async closeOne(id: string, session: McpHttpSession): Promise<void> {
    this.forget(id, session);
    await session.server.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.entries()].map(([id, s]) => this.closeOne(id, s)));
    while (this.stopping.size > 0) await Promise.all([...this.stopping]);
  }
}
