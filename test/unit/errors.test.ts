// The one table that maps SandgateError codes to JSON-RPC codes and HTTP statuses.

import { describe, expect, it } from "vitest";
import { codeOfJsonRpc, ERROR_CODES, httpStatusOf, isToolResultCode, jsonRpcCodeOf, SandgateError } from "../../src/errors/index.js";

describe("error table", () => {
  it("maps client mistakes to 4xx and invalid-params, host trouble to 5xx", () => {
    expect(httpStatusOf("UNKNOWN_LANGUAGE")).toBe(400);
    expect(jsonRpcCodeOf("UNKNOWN_LANGUAGE")).toBe(-32602);
    expect(httpStatusOf("CODE_TOO_LARGE")).toBe(413);
    expect(httpStatusOf("SESSION_NOT_FOUND")).toBe(404);
    expect(httpStatusOf("SESSION_EXPIRED")).toBe(410);
    expect(httpStatusOf("TOO_MANY_SESSIONS")).toBe(429);
    expect(httpStatusOf("SANDBOX_UNAVAILABLE")).toBe(503);
    expect(httpStatusOf("SANDBOX_FAILED")).toBe(500);
  });

  it("gives every code a valid status, a JSON-RPC code in the allowed ranges and a summary", () => {
    for (const [code, entry] of Object.entries(ERROR_CODES)) {
      expect(entry.http, code).toBeGreaterThanOrEqual(400);
      expect(entry.http, code).toBeLessThan(600);
      const rpc = entry.jsonRpc;
      expect([-32600, -32601, -32602, -32603, -32700].includes(rpc) || (rpc <= -32000 && rpc >= -32099), code).toBe(true);
      expect(entry.summary.length, code).toBeGreaterThan(10);
    }
  });

  it("maps the server's door errors to the statuses HTTP clients expect", () => {
    expect(httpStatusOf("UNAUTHORIZED")).toBe(401);
    expect(httpStatusOf("FORBIDDEN_ORIGIN")).toBe(403);
    expect(httpStatusOf("BODY_TOO_LARGE")).toBe(413);
    expect(httpStatusOf("TOO_MANY_REQUESTS")).toBe(429);
    expect(httpStatusOf("UNKNOWN_TOOL")).toBe(404);
    expect(httpStatusOf("PATH_INVALID")).toBe(400);
    expect(httpStatusOf("FILE_NOT_FOUND")).toBe(404);
    expect(jsonRpcCodeOf("MALFORMED_REQUEST")).toBe(-32700);
  });

  it("makes a malformed tool call a JSON-RPC error and failed work an isError result", () => {
    for (const code of ["INVALID_INPUT", "UNKNOWN_LANGUAGE", "CODE_EMPTY", "LIMIT_EXCEEDED", "UNKNOWN_TOOL", "PATH_INVALID"] as const) {
      expect(isToolResultCode(code), code).toBe(false);
      expect(jsonRpcCodeOf(code), code).toBe(-32602);
    }
    for (const code of ["SESSION_NOT_FOUND", "SESSION_EXPIRED", "TOO_MANY_SESSIONS", "FILE_NOT_FOUND", "SANDBOX_FAILED"] as const) {
      expect(isToolResultCode(code), code).toBe(true);
    }
  });

  it("carries code, data and cause, and serializes without the stack", () => {
    const cause = new Error("root");
    const error = new SandgateError("LIMIT_EXCEEDED", "timeout 99 s is above 30 s", { data: { field: "timeout" }, cause });
    expect(error.cause).toBe(cause);
    expect(JSON.parse(JSON.stringify(error))).toEqual({ code: "LIMIT_EXCEEDED", message: "timeout 99 s is above 30 s", data: { field: "timeout" } });
  });

  it("gives the MCP SDK's own JSON-RPC errors a code of the table, and so an HTTP status", () => {
    const cases: [number, string, number][] = [
      [-32700, "MALFORMED_REQUEST", 400],
      [-32600, "INVALID_INPUT", 400],
      [-32601, "NOT_FOUND", 404],
      [-32602, "INVALID_INPUT", 400],
      [-32603, "INTERNAL", 500],
      [-32042, "INTERNAL", 500],
    ];
    for (const [rpc, code, status] of cases) {
      expect(codeOfJsonRpc(rpc), String(rpc)).toBe(code);
      expect(httpStatusOf(codeOfJsonRpc(rpc)), String(rpc)).toBe(status);
    }
  });

  it("keeps the MCP transport's refusals at the numbers MCP clients know", () => {
    expect([jsonRpcCodeOf("MCP_SESSION_REQUIRED"), httpStatusOf("MCP_SESSION_REQUIRED")]).toEqual([-32000, 400]);
    expect([jsonRpcCodeOf("MCP_SESSION_NOT_FOUND"), httpStatusOf("MCP_SESSION_NOT_FOUND")]).toEqual([-32001, 404]);
    expect(httpStatusOf("METHOD_NOT_ALLOWED")).toBe(405);
  });
});
