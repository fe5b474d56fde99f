// The MCP server: tools, the security-policy resource, the usage prompt and logging, on the
// low-level SDK Server so that a malformed call is a JSON-RPC error, not a tool result.

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  type LoggingLevel,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { jsonRpcCodeOf, publicError, SandgateError, scrubHostPaths, type ErrorLog } from "../errors/index.js";
import type { Scope } from "../config/index.js";
import { missingScope, recordAuthFailure } from "./auth-events.js";
import type { ClientLimiter } from "./client-limiter.js";
import type { ServerContext } from "./context.js";
import { elicitationApprover } from "./elicitation-approver.js";
import { OutputForwarder } from "./output-forwarder.js";
import { POLICY_URI, securityPolicy } from "../features/governance/index.js";
import { wireErrorData } from "./retry-after.js";
import { readTreeResource, TREE_PREFIX, TREE_TEMPLATE, treeResources } from "./tree-resources.js";
import { OUTPUT_TEMPLATE, readOutputResource } from "./output-resources.js";
import { GUIDE_PROMPT, guideText } from "./prompts.js";
import { callTool, createTools, toMcpTool, type ToolDefinition } from "./tools.js";
import { profileTools } from "./tool-profile.js";
import { operations } from "./operations.js";

/** The tools that run code (their operations' effects say so): refused while the anomaly rules throttle the caller. */
const CODE_TOOLS = new Set(operations.list().flatMap((operation) => (operation.effects.includes("runs-code") && operation.surfaces.mcp ? [operation.surfaces.mcp.tool] : [])));

const LEVELS: LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

export interface McpServerOptions {
  /**
   * The verified identity of the client (an API key's name, else the MCP session, "stdio"):
   * its concurrency cap, and the sessions and files its tools see.
   */
  owner: string;
  /** What the client's API key may do: tools outside these scopes are neither listed nor callable. Default every scope. */
  scopes?: ReadonlySet<Scope>;
  limiter?: ClientLimiter;
  /** Called when a tools/call starts; the returned function when it ends (MCP session bookkeeping). */
  onCall?: () => () => void;
  /** The HTTP request that carried call `id`, when it is gone the call is stopped. */
  requestSignal?: (id: RequestId) => AbortSignal | undefined;
  /**
   * With a progressToken, a quiet call still reports progress this often, so that clients
   * which reset their request timeout on progress do not give up on a long run. Default 10 s.
   */
  heartbeatMs?: number;
}

/**
 * A JSON-RPC error as the SDK sends it (it copies `code`, `message` and `data` of what a
 * handler throws). Unlike McpError, the message is not prefixed with "MCP error <number>:".
 */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "JsonRpcError";
  }
}

/**
 * Maps a thrown error to what the client sees: SandgateErrors keep their code and data (host
 * paths scrubbed); anything else is INTERNAL with a reference, its detail logged to `log`.
 */
export function toMcpError(error: unknown, log?: ErrorLog): JsonRpcError {
  if (error instanceof JsonRpcError) return error;
  if (error instanceof McpError) return new JsonRpcError(error.code, scrubHostPaths(error.message), error.data as Record<string, unknown> | undefined);
  const shown = publicError(error, log);
  return new JsonRpcError(jsonRpcCodeOf(shown.code), shown.message, { code: shown.code, ...wireErrorData(shown) });
}

/**
 * The server's instructions to the agent, naming only the tools its profile lists. Under codemode
 * the agent reads execute_code's description with every tool list, so they only say how to work.
 */
function instructions(ctx: ServerContext): string {
  const full = ctx.config.server.toolProfile === "full";
  if (!full) {
    return Object.keys(ctx.config.mcpServers).length > 0
      ? "Do the task in execute_code: find upstream tools with search_tools, call them from the code, and print only what you need, so tool results stay out of your context."
      : "Do the task in execute_code and print only what you need.";
  }
  return (
    `sandgate runs code in isolated Linux sandboxes without network: execute_code (Python, JavaScript, TypeScript, Bash)${full ? " or execute_command (a shell line)" : ""}. ` +
    `Pass a session_id to keep variables and /workspace files across calls${full ? "; stop_session when done" : ""}. ` +
    "Upstream MCP tools are called from code (callMCPTool / call_mcp_tool / sandgate-tool): find them with search_tools" +
    (full ? " (list_servers shows the servers)" : " (code can call search_tools and list_servers too)") +
    " and print only what you need, so large tool results stay out of your context." +
    (ctx.config.security.enabled ? ` Code is analysed before it runs; the security policy may block it or hold it for a person's approval${full ? "; analyze_code checks code first" : ""}.` : "")
  );
}

/** The resources resources/list names (and GET /mcp/resources): the security policy and the generated servers/ tree. */
export function listResources(ctx: Pick<ServerContext, "codeMode">): Array<Record<string, unknown> & { uri: string; name: string }> {
  return [
    {
      uri: POLICY_URI,
      name: "security-policy",
      title: "sandgate security policy",
      description: "Limits, resource flavors, the isolation active on this host, the code policy (levels and overrides), the upstream tool policy and the approval settings",
      mimeType: "application/json",
    },
    ...treeResources(ctx.codeMode.catalog),
  ];
}

/** The templates resources/templates/list names: a file of the servers/ tree, and a call's saved full output. */
export const RESOURCE_TEMPLATES = [TREE_TEMPLATE, OUTPUT_TEMPLATE];

export function createMcpServer(ctx: ServerContext, options: McpServerOptions, allTools: ToolDefinition[] = createTools(ctx)): Server {
  // The profile decides what is listed and callable; REST keeps every tool.
  const tools = profileTools(allTools, ctx.config.server.toolProfile);
  const server = new Server(
    { name: "sandgate", title: "sandgate", version: ctx.version },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: true }, prompts: {}, logging: {} },
      instructions: instructions(ctx),
    },
  );
  let level: LoggingLevel = "info";
  const enabled = (wanted: LoggingLevel): boolean => LEVELS.indexOf(wanted) >= LEVELS.indexOf(level);

  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    level = request.params.level;
    return {};
  });

  const allowed = (tool: ToolDefinition): boolean => options.scopes?.has(tool.scope) ?? true;
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.filter(allowed).map(toMcpTool) }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const received = performance.now();
    const wanted = tools.find((tool) => tool.name === request.params.name);
    /** mcp.server.operation.duration; the tool label only ever names one of our tools. */
    const measure = (errorType?: string): void =>
      ctx.metrics?.observeMcpOperation({ method: "tools/call", tool: wanted?.name ?? "unknown", seconds: (performance.now() - received) / 1000, ...(errorType ? { errorType } : {}) });
    const errorTypeOf = (error: JsonRpcError): string => (typeof error.data?.code === "string" ? error.data.code : "_OTHER");
    if (wanted && !allowed(wanted)) {
      await recordAuthFailure(ctx, { client: options.owner, reason: "missing_scope", route: `tools/call ${wanted.name}`, scope: wanted.scope });
      throw toMcpError(missingScope(wanted.scope, `the tool ${wanted.name}`));
    }
    let release: (() => void) | undefined;
    try {
      release = options.limiter?.acquire(options.owner, CODE_TOOLS.has(request.params.name));
    } catch (error) {
      const mapped = toMcpError(error);
      measure(errorTypeOf(mapped));
      throw mapped;
    }
    const ended = options.onCall?.();
    const progressToken = extra._meta?.progressToken;
    let progress = 0;
    const forwarder = new OutputForwarder({
      send: (stream, text) => {
        const logLevel: LoggingLevel = stream === "stdout" ? "info" : "warning";
        if (enabled(logLevel)) {
          void extra.sendNotification({ method: "notifications/message", params: { level: logLevel, logger: stream, data: text } }).catch(() => undefined);
        }
        if (progressToken !== undefined) {
          progress += 1;
          void extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress, message: text } }).catch(() => undefined);
        }
      },
    });
    const started = performance.now();
    const heartbeat =
      progressToken === undefined
        ? undefined
        : setInterval(() => {
            progress += 1;
            const message = `still running after ${Math.round((performance.now() - started) / 1000)} s`;
            void extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress, message } }).catch(() => undefined);
          }, options.heartbeatMs ?? 10_000);
    const httpSignal = options.requestSignal?.(extra.requestId);
    const signal = httpSignal ? AbortSignal.any([extra.signal, httpSignal]) : extra.signal;
    const tool = request.params.name;
    try {
      const approver = elicitationApprover(server, extra, options.owner);
      const onWaiting = (message: string): void => {
        if (enabled("notice")) void extra.sendNotification({ method: "notifications/message", params: { level: "notice", logger: "approval", data: message } }).catch(() => undefined);
        if (progressToken === undefined) return;
        progress += 1;
        void extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress, message } }).catch(() => undefined);
      };
      const result = await callTool(tools, tool, request.params.arguments, { signal, onOutput: forwarder.push, owner: options.owner, onWaiting, ...(approver ? { approver } : {}) });
      forwarder.flush();
      const status = (result.structuredContent as { status?: unknown } | undefined)?.status;
      ctx.log.info({ tool, client: options.owner, ms: Math.round(performance.now() - started), isError: result.isError === true, ...(status ? { status } : {}) }, "tool call");
      measure(result.isError === true ? "tool_error" : undefined);
      return result;
    } catch (error) {
      const mapped = toMcpError(error, ctx.log);
      ctx.log.info({ tool, client: options.owner, ms: Math.round(performance.now() - started), error: mapped.message }, "tool call refused");
      measure(errorTypeOf(mapped));
      throw mapped;
    } finally {
      clearInterval(heartbeat);
      release?.();
      ended?.();
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: listResources(ctx) }));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const saved = await readOutputResource(ctx.engine, uri, options.owner).catch((error: unknown) => {
      throw toMcpError(error, ctx.log);
    });
    if (saved) return { contents: [saved] };
    if (uri === POLICY_URI) return { contents: [{ uri: POLICY_URI, mimeType: "application/json", text: JSON.stringify(securityPolicy(ctx), null, 2) }] };
    const file = readTreeResource(ctx.codeMode.catalog, uri);
    if (file) return { contents: [file] };
    throw toMcpError(new SandgateError("INVALID_INPUT", `unknown resource ${JSON.stringify(uri)}; resources/list names them (${POLICY_URI}, ${TREE_PREFIX}servers/<server>/index.ts, ...)`));
  });

  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [GUIDE_PROMPT] }));

  server.setRequestHandler(GetPromptRequestSchema, (request) => {
    if (request.params.name !== GUIDE_PROMPT.name) {
      throw toMcpError(new SandgateError("INVALID_INPUT", `unknown prompt ${JSON.stringify(request.params.name)}; the prompts are ${GUIDE_PROMPT.name}`));
    }
    return {
      description: GUIDE_PROMPT.description,
      messages: [{ role: "user", content: { type: "text", text: guideText(ctx, request.params.arguments?.task) } }],
    };
  });

  // The generated tree is listed as resources: tell the client when an upstream server changes it.
  const stopWatching = ctx.codeMode.onCatalogChanged(() => void server.sendResourceListChanged().catch(() => undefined));
  const previousOnClose = server.onclose;
  server.onclose = () => {
    stopWatching();
    previousOnClose?.();
  };

  return server;
}
