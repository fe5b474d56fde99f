// The table of SandgateError codes: what each means to a client over JSON-RPC and HTTP.
// Every code a user can see is listed here, and nowhere else.

export const ERROR_CODES = {
  INVALID_INPUT: { jsonRpc: -32602, http: 400, summary: "the request is malformed or a value is out of range" },
  UNKNOWN_LANGUAGE: { jsonRpc: -32602, http: 400, summary: "the language is not one sandgate runs" },
  CODE_EMPTY: { jsonRpc: -32602, http: 400, summary: "no code was given" },
  CODE_TOO_LARGE: { jsonRpc: -32602, http: 413, summary: "the code is larger than the configured maximum" },
  LIMIT_EXCEEDED: { jsonRpc: -32602, http: 400, summary: "a requested limit is above the admin maximum" },
  SESSION_NOT_FOUND: { jsonRpc: -32001, http: 404, summary: "no live session has this id" },
  SESSION_EXPIRED: { jsonRpc: -32001, http: 410, summary: "the session existed but expired or was stopped" },
  SESSION_BUSY: { jsonRpc: -32002, http: 409, summary: "the session is running another call" },
  TOO_MANY_SESSIONS: { jsonRpc: -32003, http: 429, summary: "the maximum number of sessions is reached" },
  SANDBOX_UNAVAILABLE: { jsonRpc: -32004, http: 503, summary: "code cannot be isolated on this host" },
  SANDBOX_FAILED: { jsonRpc: -32005, http: 500, summary: "the sandbox could not be started or broke down" },
  SHUTTING_DOWN: { jsonRpc: -32006, http: 503, summary: "sandgate is stopping" },
  CONFIG_INVALID: { jsonRpc: -32603, http: 500, summary: "the configuration is invalid" },
} as const satisfies Record<string, { jsonRpc: number; http: number; summary: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function jsonRpcCodeOf(code: ErrorCode): number {
  return ERROR_CODES[code].jsonRpc;
}

export function httpStatusOf(code: ErrorCode): number {
  return ERROR_CODES[code].http;
}
