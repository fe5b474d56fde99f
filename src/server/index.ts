// Public surface of the server layer: the MCP server, the HTTP app and server, and stdio.
export { createMcpServer, toMcpError, JsonRpcError } from "./mcp-server.js";
export type { McpServerOptions } from "./mcp-server.js";
export { createHttpApp } from "./http/app.js";
export type { HttpApp } from "./http/app.js";
export { startHttpServer, assertSafeToServe } from "./serve.js";
export type { RunningServer } from "./serve.js";
export { serveStdio } from "./stdio.js";
export { createTools, callTool, runTool, toMcpTool } from "./tools.js";
export type { ToolDefinition, ToolCallContext, ToolReply } from "./tools.js";
export { securityPolicy, POLICY_URI } from "./policy.js";
export type { ServerContext } from "./context.js";
export { toWireResult, toWireSession, executionResultSchema } from "./wire.js";
export type { WireExecutionResult } from "./wire.js";
export { observeServer } from "./observers.js";
export type { Observed } from "./observers.js";
export { ServerMetrics } from "./metrics.js";
export type { McpOperation, MetricSources } from "./metrics.js";
