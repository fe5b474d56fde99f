// The table of SandgateError codes: what each means to a client over JSON-RPC and HTTP.
// Every code a user can see is listed here, and nowhere else. `tool` says how an MCP tool
// reports it: "protocol" = a JSON-RPC error (the request itself was wrong), "result" = a
// tool result with isError (the request was fine; what it asked for failed).

export const ERROR_CODES = {
  INVALID_INPUT: { jsonRpc: -32602, http: 400, tool: "protocol", summary: "the request is malformed or a value is out of range" },
  UNKNOWN_LANGUAGE: { jsonRpc: -32602, http: 400, tool: "protocol", summary: "the language is not one sandgate runs" },
  CODE_EMPTY: { jsonRpc: -32602, http: 400, tool: "protocol", summary: "no code was given" },
  CODE_TOO_LARGE: { jsonRpc: -32602, http: 413, tool: "protocol", summary: "the code is larger than the configured maximum" },
  LIMIT_EXCEEDED: { jsonRpc: -32602, http: 400, tool: "protocol", summary: "a requested limit is above the admin maximum" },
  SESSION_NOT_FOUND: { jsonRpc: -32001, http: 404, tool: "result", summary: "no live session has this id" },
  SESSION_EXPIRED: { jsonRpc: -32001, http: 410, tool: "result", summary: "the session existed but expired or was stopped" },
  SESSION_BUSY: { jsonRpc: -32002, http: 409, tool: "result", summary: "the session is running another call" },
  TOO_MANY_SESSIONS: { jsonRpc: -32003, http: 429, tool: "result", summary: "the maximum number of sessions is reached" },
  SANDBOX_UNAVAILABLE: { jsonRpc: -32004, http: 503, tool: "result", summary: "code cannot be isolated on this host" },
  SANDBOX_FAILED: { jsonRpc: -32005, http: 500, tool: "result", summary: "the sandbox could not be started or broke down" },
  SHUTTING_DOWN: { jsonRpc: -32006, http: 503, tool: "protocol", summary: "sandgate is stopping" },
  CONFIG_INVALID: { jsonRpc: -32603, http: 500, tool: "protocol", summary: "the configuration is invalid" },
  PATH_INVALID: { jsonRpc: -32602, http: 400, tool: "protocol", summary: "a workspace path is malformed or points outside the workspace" },
  FILE_NOT_FOUND: { jsonRpc: -32007, http: 404, tool: "result", summary: "no file or directory at this workspace path" },
  FILE_TOO_LARGE: { jsonRpc: -32602, http: 413, tool: "result", summary: "the file is larger than the configured maximum" },
  WORKSPACE_FULL: { jsonRpc: -32602, http: 413, tool: "result", summary: "the session's workspace has no room for this upload (limits.maxWorkspaceMb, limits.maxWorkspaceInodes)" },
  OUTPUT_NOT_FOUND: { jsonRpc: -32002, http: 404, tool: "result", summary: "no saved output with this id and stream for this caller (unknown, expired or another caller's)" },
  NOT_A_FILE: { jsonRpc: -32602, http: 400, tool: "result", summary: "the path names a directory or special file where a regular file was expected" },
  UNKNOWN_TOOL: { jsonRpc: -32602, http: 404, tool: "protocol", summary: "no tool has this name" },
  NOT_FOUND: { jsonRpc: -32601, http: 404, tool: "protocol", summary: "no route or method has this name" },
  METHOD_NOT_ALLOWED: { jsonRpc: -32600, http: 405, tool: "protocol", summary: "the route exists but does not answer this HTTP method" },
  MCP_SESSION_REQUIRED: { jsonRpc: -32000, http: 400, tool: "protocol", summary: "an MCP request other than initialize came without the Mcp-Session-Id header initialize returned" },
  MCP_SESSION_NOT_FOUND: { jsonRpc: -32001, http: 404, tool: "protocol", summary: "no open MCP session has this Mcp-Session-Id (it ended or the server restarted); initialize a new one" },
  UNAUTHORIZED: { jsonRpc: -32008, http: 401, tool: "protocol", summary: "a valid API key is required" },
  FORBIDDEN: { jsonRpc: -32018, http: 403, tool: "protocol", summary: "the API key is valid but lacks the scope this route or tool needs (server.keyScopes)" },
  FORBIDDEN_ORIGIN: { jsonRpc: -32009, http: 403, tool: "protocol", summary: "the Host or Origin header is not allowed (DNS rebinding protection)" },
  BODY_TOO_LARGE: { jsonRpc: -32600, http: 413, tool: "protocol", summary: "the request body is larger than the configured maximum" },
  MALFORMED_REQUEST: { jsonRpc: -32700, http: 400, tool: "protocol", summary: "the request body is not valid JSON" },
  TOO_MANY_REQUESTS: { jsonRpc: -32010, http: 429, tool: "protocol", summary: "this client, or the server as a whole, has too many requests or sandboxes at once; retry after the Retry-After header (data.retry_after) seconds" },
  REQUEST_TIMEOUT: { jsonRpc: -32600, http: 408, tool: "protocol", summary: "the request body did not arrive within the configured time" },
  UPSTREAM_UNAVAILABLE: { jsonRpc: -32011, http: 503, tool: "result", summary: "an upstream MCP server is not connected or stopped during the call" },
  UPSTREAM_TIMEOUT: { jsonRpc: -32012, http: 504, tool: "result", summary: "an upstream tool call took longer than its timeout" },
  UPSTREAM_ERROR: { jsonRpc: -32013, http: 502, tool: "result", summary: "an upstream tool reported an error or its server refused the call" },
  TOOL_NOT_FOUND: { jsonRpc: -32014, http: 404, tool: "result", summary: "no upstream tool has this id; search_tools lists them" },
  TOOL_CALL_LIMIT: { jsonRpc: -32015, http: 429, tool: "result", summary: "the execution made more tool calls than allowed" },
  JOB_NOT_FOUND: { jsonRpc: -32016, http: 404, tool: "result", summary: "no background job of this caller has this id (unknown, expired or another caller's)" },
  TOO_MANY_JOBS: { jsonRpc: -32017, http: 429, tool: "result", summary: "this caller, or the server, has as many background jobs running as allowed; wait for one or stop one" },
  POLICY_BLOCKED: { jsonRpc: -32019, http: 403, tool: "result", summary: "the security policy blocks this code: its static analysis found what the policy level refuses (see data.findings)" },
  APPROVAL_DENIED: { jsonRpc: -32020, http: 403, tool: "result", summary: "the code or tool call needed a human's approval and was denied, or nobody answered in time" },
  APPROVAL_MISMATCH: { jsonRpc: -32022, http: 409, tool: "result", summary: "the decision named arguments (args_digest) other than those the approval request carries; nothing was decided" },
  APPROVAL_NOT_FOUND: { jsonRpc: -32021, http: 404, tool: "result", summary: "no approval request waits under this id (unknown, already decided, timed out or cancelled)" },
  AUDIT_UNAVAILABLE: { jsonRpc: -32030, http: 503, tool: "result", summary: "the audit log could not record this request in time (audit.writeTimeoutS: its write queue stayed full), so the request failed rather than go unrecorded; retry later" },
  INTERNAL: { jsonRpc: -32603, http: 500, tool: "protocol", summary: "an unexpected failure inside sandgate" },
} as const satisfies Record<string, { jsonRpc: number; http: number; tool: "protocol" | "result"; summary: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function jsonRpcCodeOf(code: ErrorCode): number {
  return ERROR_CODES[code].jsonRpc;
}

export function httpStatusOf(code: ErrorCode): number {
  return ERROR_CODES[code].http;
}

/**
 * The code for a JSON-RPC error that did not come from sandgate (the MCP SDK's own parse,
 * request, method and params errors), so that its HTTP status too comes from this table.
 */
export function codeOfJsonRpc(jsonRpc: number): ErrorCode {
  switch (jsonRpc) {
    case -32700:
      return "MALFORMED_REQUEST";
    case -32600:
    case -32602:
      return "INVALID_INPUT";
    case -32601:
      return "NOT_FOUND";
    default:
      return "INTERNAL";
  }
}

/** True when an MCP tool reports this code as a result with isError rather than a JSON-RPC error. */
export function isToolResultCode(code: ErrorCode): boolean {
  return ERROR_CODES[code].tool === "result";
}
