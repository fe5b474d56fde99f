// The REST API as one table of typed routes (define-route.ts): each names its method, path, input
// and response schemas and handler. The app registers the table and /openapi.json is generated from it.

import type { Context } from "hono";
import { z } from "zod";
import { allApiKeys } from "../../config/index.js";
import { SandgateError } from "../../errors/index.js";
import type { ClientLimiter } from "../client-limiter.js";
import type { ServerContext } from "../context.js";
import { fileOperations, sessionOperations } from "../../features/index.js";
import { codeRequest, executeCode, executeCodeInput, executionResultSchema } from "../../features/execute/index.js";
import { fileReadInput, fileReadOutput, fileWriteInput, fileWriteOutput } from "../../features/files/index.js";
import { runOperation } from "../../operations/index.js";
import { isSavedStream } from "../output-resources.js";
import { parseOperationArguments, toMcpTool, type ToolDefinition } from "../tools.js";
import { profileTools } from "../tool-profile.js";
import { listResources, RESOURCE_TEMPLATES } from "../mcp-server.js";
import { defineRoute, type RestRoute } from "./define-route.js";
import { operationRoutes } from "./operation-routes.js";
import { operations } from "../operations.js";
import { jobOutputRoute } from "./job-routes.js";
import { metricsRoutes } from "./metrics-route.js";
import { piiRoutes } from "./pii-routes.js";
import { downloadFile, isRawUpload, uploadMultipart, uploadRaw, wantsJson } from "./file-transfer.js";
import { jsonRpcErrorResponse } from "./errors.js";
import { callerOf } from "./caller.js";
import { answerJsonRpc, jsonRpcRequest, jsonRpcResponse } from "./mcp-execute.js";

export type { RestRoute } from "./define-route.js";

export interface RestDeps {
  ctx: ServerContext;
  tools: ToolDefinition[];
  /** The per-caller concurrency cap (MCP tools/call on /mcp/execute takes its slot per call). */
  limiter: ClientLimiter;
  /** Server-sent-events variant of an operation's call (POST /execute?stream=1), with input the route parsed. */
  streamOperation: (c: Context, id: string, input: Record<string, unknown>, signal: AbortSignal, done: () => void, owner: string) => Response;
}

const protocolInfoResponse = z.object({
  server: z.object({ name: z.string(), version: z.string() }),
  endpoint: z.string(),
  transports: z.object({ streamable_http: z.string(), stdio: z.string() }),
  protocol_versions: z.array(z.string()),
  capabilities: z.record(z.unknown()),
  tools: z.array(z.string()),
  authentication: z.string(),
});
const toolsResponse = z.object({ tools: z.array(z.record(z.unknown())) });
const resourcesResponse = z.object({
  resources: z.array(z.object({ uri: z.string(), name: z.string() }).passthrough()),
  resource_templates: z.array(z.object({ uriTemplate: z.string(), name: z.string() }).passthrough()),
});
const uploadFilesOutput = z.object({ files: z.array(fileWriteOutput) });

export function restRoutes(deps: RestDeps): RestRoute[] {
  const { ctx, tools, limiter } = deps;
  const { engine, config } = ctx;
  /**
   * A declared operation's output, for a raw route's JSON form: the input was parsed by the route's
   * schemas (the operation's own, less the path), and the operation's output schema is the route's
   * response schema `_output`, which types the reply.
   */
  const callOperation = async <S extends z.ZodType>(_output: S, id: string, input: Record<string, unknown>, owner: string, signal?: AbortSignal): Promise<z.input<S>> =>
    (await runOperation(operations.require(id), ctx, input, signal ? { owner, signal } : { owner }));
  /** The routes of these declared operations, in this order (OpenAPI lists paths as the table does). */
  const derived = (...ids: string[]): RestRoute[] => operationRoutes(ids.map((id) => operations.require(id)), ctx);
  const search = operations.require("codemode.search");

  return [
    ...derived("status.root", "status.health", "execute.languages", "governance.policy", "governance.analyze"),
    defineRoute({
      method: "post",
      path: "/execute",
      scope: "execute",
      tag: "execution",
      summary: "Run code in a sandbox",
      description:
        "Runs code and returns the result object; a failing program is a normal result (status error, timeout, memory_limit, output_limit). " +
        "With ?stream=1 the answer is a text/event-stream: `stdout` and `stderr` events ({text}) while the code runs, `approval` events ({message}) while it or one of its tool calls waits for a person's approval (GET /approvals), then one `result` event (or `error`). " +
        "With background: true the answer is 202 at once, a result with status running and job_id; follow the job under /jobs/{job_id}.",
      body: executeCodeInput,
      parseBody: (value) => parseOperationArguments(executeCode, "execute_code", value) as z.infer<typeof executeCodeInput>,
      query: z.object({ stream: z.enum(["0", "1", "true", "false"]).optional().describe("1 for server-sent events") }),
      response: executionResultSchema,
      runsCode: true,
      streams: true,
      handle: async ({ body, query, c, signal, keepSlot, owner }) => {
        if (body.background) {
          if (query.stream === "1" || query.stream === "true") {
            throw new SandgateError("INVALID_INPUT", "stream and background do not go together; follow a job's output at GET /jobs/{job_id}/output/stdout", { data: { field: "stream" } });
          }
          return c.json(await callOperation(executionResultSchema, "execute.code", body, owner), 202);
        }
        if (query.stream === "1" || query.stream === "true") {
          // Everything that would refuse the request is checked before the 200 of a stream goes out.
          engine.validate(codeRequest(body));
          return deps.streamOperation(c, "execute.code", body, signal, keepSlot(), owner);
        }
        return callOperation(executionResultSchema, "execute.code", body, owner, signal);
      },
    }),
    ...derived("jobs.list", "jobs.read", "jobs.stop"),
    // Raw: it streams the job's output as it comes.
    jobOutputRoute(ctx),
    ...derived("audit.query", "audit.verify"),
    ...derived("approvals.list", "approvals.get", "approvals.decide"),
    ...metricsRoutes(ctx),
    ...piiRoutes(ctx),
    ...derived("codemode.servers", "codemode.tools"),
    // Raw: the query names the words q and gives the limit as a string; the operation's own schema then checks them, as the tool's.
    defineRoute({
      method: "get",
      path: "/tools/search",
      scope: search.scope,
      tag: "code mode",
      summary: search.summary,
      query: z.object({
        q: z.string().describe("Words describing the task"),
        detail: z.enum(["name", "summary", "full"]).optional(),
        limit: z.string().regex(/^\d+$/, "a whole number").optional().describe("1 to 50; default 5 at detail summary, else 10"),
        server: z.string().optional(),
      }),
      response: search.output,
      handle: async ({ query, owner }) => {
        const input = parseOperationArguments(search, search.surfaces.mcp?.tool ?? search.id, {
          query: query.q,
          ...(query.detail ? { detail: query.detail } : {}),
          ...(query.limit ? { limit: Number(query.limit) } : {}),
          ...(query.server ? { server: query.server } : {}),
        });
        return callOperation(search.output, search.id, input, owner);
      },
    }),
    // The sessions and files operations, in their features' order.
    ...derived(...[...sessionOperations, ...fileOperations].map((operation) => operation.id)),
    defineRoute({
      method: "get",
      path: "/sessions/:session_id/files/content",
      scope: "files",
      tag: "files",
      summary: "Download a workspace file (streamed), or read it as JSON",
      description:
        "Sends the file's bytes, streamed, with Content-Length, a Content-Type from its extension (application/octet-stream when unknown), " +
        "X-Content-Type-Options: nosniff and Content-Disposition (attachment for anything a browser could run). " +
        "With `encoding` or `Accept: application/json` the answer is the JSON object of file_read instead (up to limits.maxFileSizeMb).",
      query: fileReadInput.omit({ session_id: true }),
      response: fileReadOutput,
      rawResponse: { contentType: "application/octet-stream", description: "the file's bytes (the Content-Type header names the guessed type)" },
      handle: async ({ params, query, owner, c }) => {
        if (wantsJson(c, query.encoding)) return callOperation(fileReadOutput, "files.read", { ...query, session_id: params.session_id }, owner);
        // A download never starts a session: an id with none is SESSION_NOT_FOUND (or SESSION_EXPIRED).
        engine.sessions.get(params.session_id, owner);
        return downloadFile(c, ctx, params.session_id, query.path, owner);
      },
    }),
    defineRoute({
      method: "put",
      path: "/sessions/:session_id/files/content",
      scope: "files",
      tag: "files",
      summary: "Create or replace a workspace file: its raw bytes as the body, or the JSON of file_write",
      description:
        "With `?path=` and any Content-Type but application/json: the body is the file's bytes, streamed to that path (up to limits.maxUploadMb, SANDGATE_MAX_UPLOAD_MB; " +
        "413 FILE_TOO_LARGE past it, 413 WORKSPACE_FULL when the workspace has no room); the file is replaced only once the whole body arrived. " +
        "Otherwise the body is the JSON {path, content, encoding?} of file_write (within server.maxBodyBytes).",
      body: fileWriteInput.omit({ session_id: true }),
      query: z.object({ path: fileReadInput.shape.path.optional().describe("Target file, for a raw body") }),
      // Without ?path= the body is the JSON form whatever its type (curl -d sends form-urlencoded).
      // Any ?path= skips the JSON parse, so a JSON body with ?path= reaches the handler's own error
      // (how to upload a .json file's bytes), not "body field path: Required".
      rawBody: { contentType: "application/octet-stream", description: "the file's bytes (any type but application/json), with ?path=", accepts: (c) => c.req.query("path") !== undefined },
      response: fileWriteOutput,
      handle: async ({ params, body, query, owner, c }) => {
        if (query.path !== undefined && isRawUpload(c)) {
          // An upload starts the session when missing, like file_write.
          engine.sessions.ensure(params.session_id, owner);
          return uploadRaw({ c, ctx, sessionId: params.session_id, owner }, query.path);
        }
        if (query.path !== undefined) {
          throw new SandgateError(
            "INVALID_INPUT",
            "with Content-Type application/json the body is file_write's JSON {path, content} and takes no ?path=; to upload a file's bytes (a .json file too) to ?path=, send them with another Content-Type, e.g. application/octet-stream (curl -T sends none)",
            { data: { field: "path", location: "query parameter" } },
          );
        }
        return callOperation(fileWriteOutput, "files.write", { ...body, session_id: params.session_id }, owner);
      },
    }),
    defineRoute({
      method: "post",
      path: "/sessions/:session_id/files",
      scope: "files",
      tag: "files",
      summary: "Upload files (multipart/form-data), streamed",
      description:
        "Each file part is written to the `path` field sent just before it, else to its file name under `?dir=` (default /workspace); " +
        "missing directories are created; each file appears whole or not at all (files written before a failing one stay). " +
        "The whole body counts against limits.maxUploadMb (413 FILE_TOO_LARGE) and the workspace's size (413 WORKSPACE_FULL).",
      query: z.object({ dir: fileReadInput.shape.path.optional().describe("Directory for parts named by their file name; default /workspace") }),
      rawBody: {
        contentType: "multipart/form-data",
        description: "file parts, each optionally after a text field `path`",
        schema: { type: "object", properties: { path: { type: "string" }, file: { type: "string", format: "binary" } } },
        accepts: () => true,
      },
      response: uploadFilesOutput,
      successStatus: 201,
      handle: async ({ params, query, owner, c }) => {
        engine.sessions.ensure(params.session_id, owner);
        return uploadMultipart({ c, ctx, sessionId: params.session_id, owner }, query.dir);
      },
    }),
    defineRoute({
      method: "get",
      path: "/outputs/:id/:stream",
      scope: "execute",
      tag: "execution",
      summary: "Read the saved full stdout or stderr of a call whose output was shortened",
      description:
        "The path is the one a result's output note names (full_output gives the same as an MCP resource URI, sandgate://outputs/{id}/{stream}). " +
        "Plain text as the code wrote it; kept for SANDGATE_OUTPUT_TTL seconds and readable only by the caller that ran the code.",
      response: z.string(),
      handle: async ({ params, owner, c }) => {
        const stream = params.stream;
        if (!isSavedStream(stream)) throw new SandgateError("OUTPUT_NOT_FOUND", `no saved output stream ${JSON.stringify(stream)}; use stdout or stderr`);
        const data = await engine.readSavedOutput(params.id, stream, owner);
        return c.body(new Uint8Array(data), 200, { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" });
      },
    }),
    defineRoute({
      method: "get",
      path: "/mcp/tools",
      scope: "execute",
      tag: "mcp",
      summary: "The MCP tools with their input and output schemas, as tools/list returns them",
      response: toolsResponse,
      handle: async () => ({ tools: profileTools(tools, ctx.config.server.toolProfile).map(toMcpTool) }),
    }),
    defineRoute({
      method: "get",
      path: "/mcp/resources",
      scope: "execute",
      tag: "mcp",
      summary: "The MCP resources and resource templates, as resources/list and resources/templates/list return them",
      description: "Read one with POST /mcp/execute, method resources/read, params {uri}.",
      response: resourcesResponse,
      handle: async () => ({ resources: listResources(ctx), resource_templates: RESOURCE_TEMPLATES }),
    }),
    defineRoute({
      method: "post",
      path: "/mcp/execute",
      scope: "any",
      tag: "mcp",
      summary: "MCP without an MCP session: one JSON-RPC 2.0 request per HTTP request",
      description:
        'Body: {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_code","arguments":{...}}}, or the tool name as method. ' +
        "Also answers initialize, ping, tools/list, resources/list, resources/templates/list, resources/read, prompts/list and prompts/get, " +
        "so an MCP client can use it as a stateless Streamable HTTP endpoint (no Mcp-Session-Id, no server-sent events); notifications get 202. " +
        "Errors are JSON-RPC errors with the HTTP status of their code.",
      body: jsonRpcRequest,
      response: jsonRpcResponse,
      refuse: (error) => jsonRpcErrorResponse(error),
      handle: ({ c, body, signal, owner }) => answerJsonRpc(body, { ctx, tools, limiter, owner, scopes: callerOf(c).scopes, signal }),
    }),
    defineRoute({
      method: "get",
      path: "/mcp/protocol-info",
      scope: "any",
      tag: "mcp",
      summary: "How to connect over MCP: endpoint, transports, protocol versions and capabilities",
      response: protocolInfoResponse,
      handle: async () => ({
        server: { name: "sandgate", version: ctx.version },
        endpoint: "/mcp",
        transports: { streamable_http: "/mcp", stdio: "sandgate stdio" },
        protocol_versions: ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
        capabilities: { tools: { listChanged: false }, resources: {}, prompts: {}, logging: {} },
        tools: tools.map((t) => t.name),
        authentication: allApiKeys(config.server).length === 0 ? "none" : "Authorization: Bearer <API key>",
      }),
    }),
  ];
}
