// POST /mcp/execute as an MCP endpoint without sessions, driven by the SDK's own Streamable HTTP
// client against the real server, and the JSON-RPC errors of the MCP routes, all from the error table.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../src/errors/index.js";
import { connectMcp } from "../fixtures/mcp-client.js";
import { bearer, rawRequest, useTestServer } from "../server-helpers.js";

const KEY = "mcp-execute-key-0123456789";

const rest = useTestServer({ pool: { python: 1, javascript: 0, bash: 1 }, server: { apiKeys: { tester: KEY } } });

async function executeClient(): Promise<{ client: Client; transport: StreamableHTTPClientTransport; errors: Error[] }> {
  const errors: Error[] = [];
  const { client, transport } = await connectMcp(rest.server.url, { path: "/mcp/execute", headers: bearer(KEY), name: "mcp-execute-test", onError: (error) => errors.push(error) });
  return { client, transport, errors };
}

describe("POST /mcp/execute with an MCP client", () => {
  it("initializes, pings, lists tools, resources, templates and prompts, and calls a tool, without a session", async () => {
    const { client, transport, errors } = await executeClient();
    try {
      expect(client.getServerVersion()).toMatchObject({ name: "sandgate", version: "test" });
      // initialize handed out no Mcp-Session-Id, so no request of this client names a session.
      expect(transport.sessionId).toBeUndefined();
      await client.ping();
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["execute_code", "execute_command", "file_read", "search_tools"]));
      const resources = await client.listResources();
      expect(resources.resources.map((r) => r.uri)).toContain("sandgate://security-policy");
      const templates = await client.listResourceTemplates();
      expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toContain("sandgate://outputs/{id}/{stream}");
      const prompts = await client.listPrompts();
      expect(prompts.prompts.length).toBeGreaterThan(0);
      const ran = await client.callTool({ name: "execute_code", arguments: { language: "python", code: "6 * 7" } });
      expect(ran.structuredContent).toMatchObject({ status: "ok", value: 42 });
      // The client's GET for a server-to-client stream was told 405, which the spec allows: no error.
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("an unknown tool is a JSON-RPC error the client raises, naming the tool", async () => {
    const { client } = await executeClient();
    try {
      await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toThrow(/no_such_tool/);
    } finally {
      await client.close();
    }
  });

  it("GET and DELETE are 405 with Allow: POST and a JSON-RPC error", async () => {
    for (const method of ["GET", "DELETE"]) {
      const reply = await rawRequest(`${rest.server.url}/mcp/execute`, { method, headers: bearer(KEY) });
      expect(reply.status, method).toBe(405);
      expect(reply.headers.allow).toBe("POST");
      expect(reply.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: ERROR_CODES.METHOD_NOT_ALLOWED.jsonRpc, data: { code: "METHOD_NOT_ALLOWED" } } });
    }
  });

  it("a notification is accepted with 202 and no body", async () => {
    const reply = await rawRequest(`${rest.server.url}/mcp/execute`, {
      method: "POST",
      headers: { ...bearer(KEY), "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    expect(reply.status).toBe(202);
    expect(reply.text).toBe("");
  });
});

describe("the MCP routes' own refusals are JSON-RPC errors from the error table", () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    rawRequest(`${rest.server.url}${path}`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body });

  it("an unknown Mcp-Session-Id is 404 MCP_SESSION_NOT_FOUND", async () => {
    const reply = await post("/mcp", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), { ...bearer(KEY), "mcp-session-id": "gone" });
    expect(reply.status).toBe(404);
    expect(reply.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: ERROR_CODES.MCP_SESSION_NOT_FOUND.jsonRpc, message: expect.stringContaining("gone"), data: { code: "MCP_SESSION_NOT_FOUND" } } });
  });

  it("a request before initialize is 400 MCP_SESSION_REQUIRED, malformed JSON 400 MALFORMED_REQUEST", async () => {
    const early = await post("/mcp", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), bearer(KEY));
    expect(early.status).toBe(400);
    expect(early.json).toMatchObject({ error: { code: ERROR_CODES.MCP_SESSION_REQUIRED.jsonRpc, data: { code: "MCP_SESSION_REQUIRED" } } });
    for (const path of ["/mcp", "/mcp/execute"]) {
      const malformed = await post(path, "{nope", bearer(KEY));
      expect(malformed.status, path).toBe(400);
      expect(malformed.json, path).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: ERROR_CODES.MALFORMED_REQUEST.jsonRpc, data: { code: "MALFORMED_REQUEST" } } });
    }
  });

  it("a missing API key on /mcp and /mcp/execute is 401 with a JSON-RPC error and WWW-Authenticate", async () => {
    for (const path of ["/mcp", "/mcp/execute"]) {
      const reply = await post(path, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }));
      expect(reply.status, path).toBe(401);
      expect(reply.headers["www-authenticate"], path).toMatch(/Bearer/);
      expect(reply.json, path).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: ERROR_CODES.UNAUTHORIZED.jsonRpc, data: { code: "UNAUTHORIZED" } } });
    }
  });

  it("no source file outside src/errors writes a JSON-RPC error number", () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) {
          if (path !== join("src", "errors")) walk(path);
        } else if (/\.ts$/.test(name)) {
          readFileSync(path, "utf8")
            .split("\n")
            .forEach((line, i) => {
              if (/-32[0-9]{3}\b/.test(line)) offenders.push(`${path}:${i + 1}: ${line.trim()}`);
            });
        }
      }
    };
    walk("src");
    expect(offenders).toEqual([]);
  });
});
