// The HTTP application: the request lifecycle as one ordered list of named guards (body cap and deadline,
// Host/Origin, CORS, API key), then MCP at /mcp, the typed REST route table with each route's stages
// (scope, parse, limits, handler), the OpenAPI document and docs, and JSON errors for the rest.

import { Hono, type Context, type MiddlewareHandler } from "hono";
import { streamSSE } from "hono/streaming";
import { allApiKeys } from "../../config/index.js";
import { isSandgateError, publicError, SandgateError } from "../../errors/index.js";
import { flushAuthFailures, missingScope, recordAuthFailure } from "../auth-events.js";
import { ClientLimiter } from "../client-limiter.js";
import type { ServerContext } from "../context.js";
import { OutputForwarder } from "../output-forwarder.js";
import { runOperation } from "../../operations/index.js";
import { operations } from "../operations.js";
import { createTools, type ToolDefinition } from "../tools.js";
import { bodyGuard } from "./body-guard.js";
import { renderDocsPage } from "./docs-page.js";
import { errorBody, errorResponse } from "./errors.js";
import { callerOf } from "./caller.js";
import { authGuard, corsGuard, originGuard, publicPaths } from "./guard.js";
import { McpHttpSessions } from "./mcp-route.js";
import { openApiDocument } from "./openapi.js";
import { restRoutes, type RestRoute } from "./rest-routes.js";

export interface HttpApp {
  app: Hono;
  mcp: McpHttpSessions;
  close(): Promise<void>;
}

export function createHttpApp(ctx: ServerContext, tools: ToolDefinition[] = createTools(ctx)): HttpApp {
  const { config, log } = ctx;
  const limiter = new ClientLimiter(config.server.maxConcurrentPerClient, ctx.anomalies);
  const mcp = new McpHttpSessions(ctx, tools, limiter);
  ctx.metrics?.watchMcpSessions(() => mcp.count);
  ctx.mcpSessionCount = () => mcp.count;
  const app = new Hono();

  const streamOperation = (c: Context, id: string, input: Record<string, unknown>, signal: AbortSignal, done: () => void, owner: string): Response =>
    streamSSE(c, async (stream) => {
      const controller = new AbortController();
      stream.onAbort(() => controller.abort());
      const forward = new OutputForwarder({
        send: (name, text) => void stream.writeSSE({ event: name, data: JSON.stringify({ text }) }).catch(() => undefined),
      });
      try {
        // The route parsed the input with the operation's own schema already.
        // A wait for a person's approval is told as `approval` events, so the caller knows where to decide it.
        const onWaiting = (message: string): void => void stream.writeSSE({ event: "approval", data: JSON.stringify({ message }) }).catch(() => undefined);
        const output = await runOperation(operations.require(id), ctx, input, { signal: AbortSignal.any([signal, controller.signal]), onOutput: forward.push, owner, onWaiting });
        forward.flush();
        await stream.writeSSE({ event: "result", data: JSON.stringify(output) });
      } catch (error) {
        forward.flush();
        await stream.writeSSE({ event: "error", data: JSON.stringify(errorBody(publicError(error, log))) });
      } finally {
        done();
      }
    });

  const routes = restRoutes({ ctx, tools, limiter, streamOperation });
  const document = openApiDocument(routes, { version: ctx.version, secured: allApiKeys(config.server).length > 0 });

  // Routes that stream a raw body (file uploads) bound it themselves, against limits.maxUploadMb.
  const streamed = routes.filter((r) => r.rawBody).map((r) => ({ route: r, pattern: new RegExp(`^${r.path.replace(/:[A-Za-z_]+/g, "[^/]+")}$`) }));
  const exempt = (c: Context): boolean =>
    streamed.some(({ route, pattern }) => route.method === c.req.method.toLowerCase() && pattern.test(c.req.path) && route.rawBody?.accepts(c) === true);
  /**
   * The request lifecycle, in order. Every request: the body's cap and deadline, Host and Origin,
   * CORS, the API key. Then a route's own stages (register below): the key's scope, the input
   * parsed once with the route's schemas, the caller's concurrency cap, the handler (an operation's
   * answer checked against its output schema); and errors, whatever stage threw, as one JSON body
   * (onError, notFound). MCP at /mcp has its own stages after the four guards (mcp-route.ts).
   */
  const guards: ReadonlyArray<readonly [stage: string, guard: MiddlewareHandler]> = [
    ["body cap and deadline", bodyGuard({ maxBytes: config.server.maxBodyBytes, timeoutMs: config.server.bodyTimeoutS * 1000, exempt })],
    ["Host and Origin", originGuard({ server: config.server })],
    ["CORS", corsGuard({ server: config.server })],
    ["API key", authGuard({ server: config.server, publicPaths: publicPaths(routes), onRefused: ({ reason, route, peer }) => recordAuthFailure(ctx, { client: peer, reason, route }) })],
  ];
  for (const [, guard] of guards) app.use("*", guard);

  app.all("/mcp", (c) => mcp.handle(c));
  // /mcp/execute is sessionless: no server-to-client stream to GET and no session to DELETE.
  app.on(["GET", "DELETE"], "/mcp/execute", (c) => {
    c.header("allow", "POST");
    return errorResponse(c, new SandgateError("METHOD_NOT_ALLOWED", `${c.req.method} /mcp/execute: this endpoint keeps no MCP session and sends no event stream; POST one JSON-RPC request at a time`));
  });
  app.get("/openapi.json", (c) => c.json(document));
  app.get("/docs", (c) => c.html(renderDocsPage(document)));

  const register = (route: RestRoute): void => {
    app.on(route.method.toUpperCase(), route.path, async (c) => {
      // Scope, before anything is parsed: a key may not learn about, or probe unrecorded, the input of a route it may not use.
      const caller = callerOf(c);
      if (route.scope !== "any" && route.scope !== "public" && !caller.scopes.has(route.scope)) {
        await recordAuthFailure(ctx, { client: caller.id, reason: "missing_scope", route: `${c.req.method} ${c.req.path}`, scope: route.scope });
        return errorResponse(c, missingScope(route.scope, `${route.method.toUpperCase()} ${route.path}`));
      }
      // Parse: the input, once, with the route's schemas.
      let handle: Awaited<ReturnType<RestRoute["prepare"]>>;
      try {
        handle = await route.prepare(c);
      } catch (error) {
        if (route.refuse && isSandgateError(error)) return route.refuse(error, c);
        throw error;
      }
      // Limits: the caller's concurrency cap, for routes that cost like a run.
      const owner = caller.id;
      const release = route.runsCode ? limiter.acquire(owner) : (): void => undefined;
      let kept = false;
      const keepSlot = (): (() => void) => {
        kept = true;
        return release;
      };
      try {
        // Handler; an operation's answer is checked against its output schema there (runOperation), a raw route's is typed by its response schema.
        const result = await handle({ c, signal: c.req.raw.signal, keepSlot, owner });
        return result instanceof Response ? result : c.json(result, route.successStatus);
      } finally {
        if (!kept) release();
      }
    });
  };
  routes.forEach(register);

  app.notFound((c) => errorResponse(c, new SandgateError("NOT_FOUND", `no route ${c.req.method} ${c.req.path}; see /docs for the API`)));
  app.onError((error, c) => errorResponse(c, publicError(error, log)));

  return {
    app,
    mcp,
    close: async () => {
      await mcp.close();
      await flushAuthFailures(ctx);
    },
  };
}
