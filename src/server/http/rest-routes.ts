// The REST API as one table of routes: each names its method, path, input and response
// schemas and handler. The app registers the table and /openapi.json is generated from it.

import { execFileSync } from "node:child_process";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import { allApiKeys, LANGUAGES } from "../../config/index.js";
import { httpStatusOf, isSandgateError, jsonRpcCodeOf, publicError, SandgateError } from "../../errors/index.js";
import type { AdmissionState } from "../../execution/index.js";
import type { ServerContext } from "../context.js";
import { securityPolicy } from "../policy.js";
import { isSavedStream } from "../output-resources.js";
import { retryAfterOf, wireErrorData } from "../retry-after.js";
import { listServersOutput, searchToolsOutput } from "../code-mode-tools.js";
import { callTool, codeRequest, findTool, parseToolArguments, runTool, toMcpTool, type ToolCallContext, type ToolDefinition } from "../tools.js";
import {
  executeCodeInput,
  executionResultSchema,
  fileListOutput,
  fileReadOutput,
  fileWriteOutput,
  getVolumePathOutput,
  sessionSchema,
  stopSessionOutput,
  toWireSession,
} from "../wire.js";

export type HttpMethod = "get" | "post" | "put" | "delete";

export interface RouteInput {
  body: Record<string, unknown>;
  query: Record<string, unknown>;
  params: Record<string, string>;
  c: Context;
  /** Aborted when the client disconnects. */
  signal: AbortSignal;
  /** The body's text, for routes that parse it themselves (ownsBody). */
  rawBody: string;
  /** For answers that outlive the handler (streams): the caller releases the concurrency slot. */
  keepSlot: () => () => void;
  /** The verified caller (server/http/caller.ts): sessions and files are looked up among its own. */
  owner: string;
}

export interface RestRoute {
  method: HttpMethod;
  path: string;
  summary: string;
  description?: string;
  tag: string;
  body?: z.AnyZodObject;
  query?: z.AnyZodObject;
  response: z.ZodType;
  successStatus?: 200 | 201;
  /** Counted against the per-client concurrency cap (it runs code). */
  runsCode?: boolean;
  /** The handler validates the body itself (the schema is only documented). */
  ownsBody?: boolean;
  /** Also answers with server-sent events (documented in OpenAPI). */
  streams?: boolean;
  handle(input: RouteInput): Promise<unknown>;
}

export interface RestDeps {
  ctx: ServerContext;
  tools: ToolDefinition[];
  mcpSessionCount: () => number;
  /** Server-sent-events variant of a tool call (POST /execute?stream=1). */
  streamTool: (c: Context, tool: string, args: unknown, signal: AbortSignal, done: () => void, owner: string) => Response;
}

const rootResponse = z.object({ name: z.string(), version: z.string(), status: z.string(), mcp: z.string(), docs: z.string(), openapi: z.string() });
const healthResponse = z.object({
  status: z.enum(["ok", "degraded"]),
  version: z.string(),
  uptime_s: z.number(),
  sandbox: z.record(z.unknown()),
  sessions: z.object({ active: z.number(), max: z.number() }),
  mcp_sessions: z.number(),
  capacity: z
    .object({ sandboxes: z.number(), max_sandboxes: z.number(), committed_mb: z.number(), max_committed_mb: z.number(), waiting: z.number() })
    .describe("Live sandboxes and their committed memory against the server-wide caps, and calls waiting for room"),
  pool: z.record(z.unknown()),
  upstream: z.array(z.object({ name: z.string(), state: z.string(), tool_count: z.number() })).describe("Upstream MCP servers (error details: list_servers, with the API key)"),
});
function capacityOf(state: AdmissionState): z.infer<typeof healthResponse>["capacity"] {
  return {
    sandboxes: state.sandboxes,
    max_sandboxes: state.maxSandboxes,
    committed_mb: state.committedMb,
    max_committed_mb: state.maxCommittedMb,
    waiting: state.waiting,
  };
}
const languagesResponse = z.object({
  languages: z.array(z.object({ name: z.string(), runner: z.string(), version: z.string().nullable(), file_extensions: z.array(z.string()) })),
});
const toolsResponse = z.object({ tools: z.array(z.record(z.unknown())) });
const jsonRpcRequest = z
  .object({
    jsonrpc: z.literal("2.0"),
    id: z.union([z.string(), z.number()]).optional(),
    method: z.string().describe('"tools/call" with params {name, arguments}, or a tool name with the arguments as params'),
    params: z.record(z.unknown()).optional(),
  })
  .strict();
const jsonRpcResponse = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.record(z.unknown()).optional(),
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
});

const EXTENSIONS: Record<string, string[]> = { python: [".py"], javascript: [".js", ".mjs", ".cjs"], typescript: [".ts"], bash: [".sh"] };

function interpreterVersion(path: string): string | null {
  try {
    return execFileSync(path, ["--version"], { encoding: "utf8", timeout: 5000, stdio: ["ignore", "pipe", "pipe"] }).trim().split("\n")[0] ?? null;
  } catch {
    return null;
  }
}

export function restRoutes(deps: RestDeps): RestRoute[] {
  const { ctx, tools } = deps;
  const { engine, config } = ctx;
  const call = (tool: string, args: unknown, owner: string, signal?: AbortSignal): Promise<Record<string, unknown>> => {
    const context: ToolCallContext = signal ? { signal, owner } : { owner };
    return runTool(tools, tool, args, context).then((reply) => reply.structured);
  };
  let languages: z.infer<typeof languagesResponse> | undefined;

  return [
    {
      method: "get",
      path: "/",
      tag: "status",
      summary: "Basic status (no API key needed)",
      response: rootResponse,
      handle: async () => ({ name: "sandgate", version: ctx.version, status: "ok", mcp: "/mcp", docs: "/docs", openapi: "/openapi.json" }),
    },
    {
      method: "get",
      path: "/health",
      tag: "status",
      summary: "Detailed health: protections active, sessions and warm pool (no API key needed)",
      response: healthResponse,
      handle: async () => {
        const runtime = engine.runtime;
        const pool = engine.poolState();
        const upstream = ctx.codeMode.status().map((s) => ({ name: s.name, state: s.state, tool_count: s.toolCount }));
        const degraded =
          Object.values(pool).some((kind) => kind.target > 0 && kind.ready === 0 && kind.failures > 0) || upstream.some((s) => s.state === "failed");
        return {
          status: degraded ? "degraded" : "ok",
          version: ctx.version,
          uptime_s: Math.round((Date.now() - ctx.startedAt) / 100) / 10,
          sandbox: {
            bubblewrap: runtime.bwrapPath,
            namespaces: ["user", "pid", "network", "ipc", "uts", "mount", "cgroup"],
            seccomp: runtime.seccompFile !== undefined,
            cgroups: runtime.cgroups.mode,
            cgroup_controllers: runtime.cgroups.controllers,
            // Session sandboxes are frozen between calls (threads and timers left running use no CPU).
            freezes_idle_sessions: runtime.cgroups.freezer === true,
            host_user: runtime.hostUser ? runtime.hostUser.uid : process.getuid?.(),
          },
          sessions: { active: engine.sessions.count, max: config.sessions.max },
          mcp_sessions: deps.mcpSessionCount(),
          capacity: capacityOf(engine.admissionState()),
          pool,
          upstream,
        };
      },
    },
    {
      method: "get",
      path: "/languages",
      tag: "execution",
      summary: "Languages sandgate runs, with their interpreters",
      response: languagesResponse,
      handle: async () => {
        const paths = engine.runtime.interpreters;
        const runners: Record<string, string> = { python: paths.python, javascript: paths.node, typescript: paths.node, bash: paths.bash };
        languages ??= {
          languages: LANGUAGES.map((name) => {
            const runner = runners[name] ?? "";
            return { name, runner, version: interpreterVersion(runner), file_extensions: EXTENSIONS[name] ?? [] };
          }),
        };
        return languages;
      },
    },
    {
      method: "get",
      path: "/security/policy",
      tag: "status",
      summary: "The effective security policy: limits, flavors, isolation active on this host",
      response: z.record(z.unknown()),
      handle: async () => securityPolicy(ctx),
    },
    {
      method: "post",
      path: "/execute",
      tag: "execution",
      summary: "Run code in a sandbox",
      description:
        "Runs code and returns the result object; a failing program is a normal result (status error, timeout, memory_limit, output_limit). " +
        "With ?stream=1 the answer is a text/event-stream: `stdout` and `stderr` events ({text}) while the code runs, then one `result` event (or `error`).",
      body: executeCodeInput,
      query: z.object({ stream: z.enum(["0", "1", "true", "false"]).optional().describe("1 for server-sent events") }),
      response: executionResultSchema,
      runsCode: true,
      streams: true,
      handle: async ({ body, query, c, signal, keepSlot, owner }) => {
        if (query.stream === "1" || query.stream === "true") {
          // Everything that would refuse the request is checked before the 200 of a stream goes out.
          engine.validate(codeRequest(parseToolArguments(findTool(tools, "execute_code"), body) as z.infer<typeof executeCodeInput>));
          return deps.streamTool(c, "execute_code", body, signal, keepSlot(), owner);
        }
        return call("execute_code", body, owner, signal);
      },
    },
    {
      method: "get",
      path: "/servers",
      tag: "code mode",
      summary: "Upstream MCP servers: state, tool count, module names, why one is down",
      response: listServersOutput,
      handle: ({ owner }) => call("list_servers", {}, owner),
    },
    {
      method: "get",
      path: "/tools/search",
      tag: "code mode",
      summary: "Ranked search over the upstream tools that code can call",
      query: z.object({
        q: z.string().describe("Words describing the task"),
        detail: z.enum(["name", "summary", "full"]).optional(),
        limit: z.string().regex(/^\d+$/, "a whole number").optional().describe("1 to 50, default 10"),
        server: z.string().optional(),
      }),
      response: searchToolsOutput,
      handle: ({ query, owner }) =>
        call("search_tools", {
          query: query.q,
          ...(query.detail ? { detail: query.detail } : {}),
          ...(query.limit ? { limit: Number(query.limit) } : {}),
          ...(query.server ? { server: query.server } : {}),
        }, owner),
    },
    {
      method: "get",
      path: "/sessions",
      tag: "sessions",
      summary: "List your live sessions (each caller sees only its own)",
      response: z.object({ sessions: z.array(sessionSchema) }),
      handle: ({ owner }) => call("get_sessions", {}, owner),
    },
    {
      method: "post",
      path: "/sessions",
      tag: "sessions",
      summary: "Start a session (or return the live one with this id)",
      body: z.object({ session_id: z.string().min(1).max(128).optional().describe("Id to use; a random one when omitted") }).strict(),
      response: sessionSchema,
      successStatus: 201,
      handle: async ({ body, owner }) => {
        const id = typeof body.session_id === "string" ? body.session_id : undefined;
        return toWireSession(id === undefined ? engine.sessions.create(undefined, owner) : engine.sessions.ensure(id, owner).info);
      },
    },
    {
      method: "get",
      path: "/sessions/:session_id",
      tag: "sessions",
      summary: "Describe one session",
      response: sessionSchema,
      handle: async ({ params, owner }) => toWireSession(engine.sessions.get(params.session_id ?? "", owner)),
    },
    {
      method: "delete",
      path: "/sessions/:session_id",
      tag: "sessions",
      summary: "Stop a session and delete its workspace",
      response: stopSessionOutput,
      handle: ({ params, owner }) => call("stop_session", { session_id: params.session_id }, owner),
    },
    {
      method: "get",
      path: "/sessions/:session_id/files",
      tag: "files",
      summary: "List a directory of the session's workspace",
      query: z.object({ path: z.string().optional().describe("Directory relative to /workspace; default the workspace itself") }),
      response: fileListOutput,
      handle: ({ params, query, owner }) => call("file_list", { session_id: params.session_id, ...query }, owner),
    },
    {
      method: "get",
      path: "/sessions/:session_id/files/content",
      tag: "files",
      summary: "Read a workspace file",
      query: z.object({ path: z.string().describe("File relative to /workspace"), encoding: z.enum(["utf8", "base64"]).optional() }),
      response: fileReadOutput,
      handle: ({ params, query, owner }) => call("file_read", { session_id: params.session_id, ...query }, owner),
    },
    {
      method: "put",
      path: "/sessions/:session_id/files/content",
      tag: "files",
      summary: "Create or replace a workspace file",
      body: z.object({ path: z.string(), content: z.string(), encoding: z.enum(["utf8", "base64"]).optional() }).strict(),
      response: fileWriteOutput,
      handle: ({ params, body, owner }) => call("file_write", { ...body, session_id: params.session_id }, owner),
    },
    {
      method: "get",
      path: "/outputs/:id/:stream",
      tag: "execution",
      summary: "Read the saved full stdout or stderr of a call whose output was shortened",
      description:
        "The path is the one a result's output note names (full_output gives the same as an MCP resource URI, sandgate://outputs/{id}/{stream}). " +
        "Plain text as the code wrote it; kept for SANDGATE_OUTPUT_TTL seconds and readable only by the caller that ran the code.",
      response: z.string(),
      handle: async ({ params, owner, c }) => {
        const stream = params.stream;
        if (!isSavedStream(stream)) throw new SandgateError("OUTPUT_NOT_FOUND", `no saved output stream ${JSON.stringify(stream)}; use stdout or stderr`);
        const data = await engine.readSavedOutput(params.id ?? "", stream, owner);
        return c.body(new Uint8Array(data), 200, { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" });
      },
    },
    {
      method: "get",
      path: "/volumes",
      tag: "files",
      summary: "Volumes the admin mounted into every sandbox",
      response: getVolumePathOutput,
      handle: ({ owner }) => call("get_volume_path", {}, owner),
    },
    {
      method: "get",
      path: "/mcp/tools",
      tag: "mcp",
      summary: "The MCP tools with their input and output schemas, as tools/list returns them",
      response: toolsResponse,
      handle: async () => ({ tools: tools.map(toMcpTool) }),
    },
    {
      method: "post",
      path: "/mcp/execute",
      tag: "mcp",
      summary: "Call one MCP tool with a single JSON-RPC 2.0 request, without an MCP session",
      description: 'Body: {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_code","arguments":{...}}}, or the tool name as method.',
      body: jsonRpcRequest,
      response: jsonRpcResponse,
      runsCode: true,
      ownsBody: true,
      handle: ({ rawBody, c, signal, owner }) => jsonRpcToolCall(c, tools, rawBody, signal, owner),
    },
    {
      method: "get",
      path: "/mcp/protocol-info",
      tag: "mcp",
      summary: "How to connect over MCP: endpoint, transports, protocol versions and capabilities",
      response: z.record(z.unknown()),
      handle: async () => ({
        server: { name: "sandgate", version: ctx.version },
        endpoint: "/mcp",
        transports: { streamable_http: "/mcp", stdio: "sandgate stdio" },
        protocol_versions: ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
        capabilities: { tools: { listChanged: false }, resources: {}, prompts: {}, logging: {} },
        tools: tools.map((t) => t.name),
        authentication: allApiKeys(config.server).length === 0 ? "none" : "Authorization: Bearer <API key>",
      }),
    },
  ];
}

/**
 * POST /mcp/execute: one JSON-RPC 2.0 tools/call without an MCP session. Errors keep the
 * JSON-RPC shape and take the HTTP status of their code, so plain HTTP clients see a 4xx.
 */
async function jsonRpcToolCall(c: Context, tools: ToolDefinition[], text: string, signal: AbortSignal, owner: string): Promise<Response> {
  let body: unknown;
  let id: string | number | null = null;
  const fail = (thrown: SandgateError): Response => {
    const error = publicError(thrown);
    const retryAfter = retryAfterOf(error);
    if (retryAfter !== undefined) c.header("retry-after", String(retryAfter));
    return c.json(
      { jsonrpc: "2.0", id, error: { code: jsonRpcCodeOf(error.code), message: error.message, data: { code: error.code, ...wireErrorData(error) } } },
      httpStatusOf(error.code) as ContentfulStatusCode,
    );
  };
  try {
    body = JSON.parse(text);
  } catch (error) {
    return fail(new SandgateError("MALFORMED_REQUEST", `the request body is not valid JSON: ${(error as Error).message}`));
  }
  const parsed = jsonRpcRequest.safeParse(body);
  id = parsed.success ? (parsed.data.id ?? null) : null;
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return fail(new SandgateError("INVALID_INPUT", `not a JSON-RPC 2.0 request: ${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`));
  }
  const { method, params = {} } = parsed.data;
  const name = method === "tools/call" ? params.name : method;
  const args = method === "tools/call" ? params.arguments : params;
  if (typeof name !== "string") return fail(new SandgateError("INVALID_INPUT", "tools/call needs params.name, the tool to call"));
  try {
    return c.json({ jsonrpc: "2.0", id, result: await callTool(tools, name, args ?? {}, { signal, owner }) });
  } catch (error) {
    if (isSandgateError(error)) return fail(error);
    throw error;
  }
}
