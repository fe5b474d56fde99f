// API key scopes through the real server on port 0: a key reaches only the REST routes and MCP
// tools of its scopes, every refusal says which scope is missing, and refusals become events.

import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import type { GovernanceEvent } from "../../src/features/governance/index.js";
import { startHttpServer, type RunningServer } from "../../src/server/index.js";
import { useTestEngine } from "../helpers.js";
import { connectMcp } from "../fixtures/mcp-client.js";
import { bearer, expectError, jsonApi, serverContext, type Api } from "../server-helpers.js";

const RUNNER = "runner-key-0123456789";
const AUDITOR = "auditor-key-012345678";
const ADMIN = "admin-key-0123456789a";
const KEYS = { runner: RUNNER, auditor: AUDITOR, admin: ADMIN };
const SCOPES = { runner: ["execute" as const], auditor: ["audit" as const] };

const fx = useTestEngine({}, { python: 1, javascript: 0, bash: 0 });

async function withScopedServer(fn: (server: RunningServer, api: Api, events: GovernanceEvent[]) => Promise<void>): Promise<void> {
  const ctx = serverContext(fx.engine, fx.config, { apiKeys: KEYS, keyScopes: SCOPES });
  const events: GovernanceEvent[] = [];
  ctx.governance.events.subscribe({ record: (event) => void events.push(event) });
  const server = await startHttpServer(ctx);
  try {
    await fn(server, jsonApi(() => server.url), events);
  } finally {
    await server.close();
  }
}

describe("API key scopes", () => {
  it("lets an execute-only key run code but refuses sessions and files with 403 naming the scope", async () => {
    await withScopedServer(async (_s, api, events) => {
      expect((await api("/execute", { json: { language: "python", code: "6 * 7" }, headers: bearer(RUNNER) })).body).toMatchObject({ status: "ok", value: 42 });
      const sessions = expectError(await api("/sessions", { headers: bearer(RUNNER) }), 403, "FORBIDDEN");
      expect(sessions.message).toMatch(/needs the scope "sessions"/);
      expect(sessions.data?.scope).toBe("sessions");
      expectError(await api("/sessions/s1/files", { headers: bearer(RUNNER) }), 403, "FORBIDDEN");
      // The key with every scope (not listed in keyScopes) reaches the same routes.
      expect((await api("/sessions", { headers: bearer(ADMIN) })).status).toBe(200);
      expect(events.filter((e) => e.kind === "auth_failure")).toEqual([
        expect.objectContaining({ client: "key:runner", reason: "missing_scope", scope: "sessions", route: "GET /sessions" }),
        expect.objectContaining({ client: "key:runner", reason: "missing_scope", scope: "files", route: "GET /sessions/s1/files" }),
      ]);
    });
  });

  it("refuses code execution to a key without the execute scope", async () => {
    await withScopedServer(async (_s, api) => {
      const refused = expectError(await api("/execute", { json: { language: "python", code: "1" }, headers: bearer(AUDITOR) }), 403, "FORBIDDEN");
      expect(refused.message).toMatch(/POST \/execute/);
      // Public routes stay open to every key.
      expect((await api("/languages", { headers: bearer(AUDITOR) })).status).toBe(200);
    });
  });

  it("lists over MCP only the tools a key's scopes allow and refuses a call of any other", async () => {
    await withScopedServer(async (server, _api, events) => {
      const { client } = await connectMcp(server.url, { headers: bearer(RUNNER) });
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).toContain("execute_code");
        expect(names).not.toContain("file_read");
        expect(names).not.toContain("get_sessions");
        await expect(client.callTool({ name: "file_list", arguments: { session_id: "s1" } })).rejects.toThrow(/needs the scope "files"/);
        expect(events).toContainEqual(expect.objectContaining({ kind: "auth_failure", client: "key:runner", reason: "missing_scope", route: "tools/call file_list" }));
      } finally {
        await client.close();
      }
      const admin = await connectMcp(server.url, { headers: bearer(ADMIN) });
      try {
        expect((await admin.client.listTools()).tools.map((t) => t.name)).toContain("file_read");
      } finally {
        await admin.client.close();
      }
    });
  });

  it("records a missing or invented key as an auth failure, never the key itself", async () => {
    await withScopedServer(async (_s, api, events) => {
      expectError(await api("/execute", { json: { language: "python", code: "1" } }), 401, "UNAUTHORIZED");
      expectError(await api("/execute", { json: { language: "python", code: "1" }, headers: bearer("invented-key-0123456789") }), 401, "UNAUTHORIZED");
      const failures = events.filter((e) => e.kind === "auth_failure");
      expect(failures.map((e) => e.kind === "auth_failure" && e.reason)).toEqual(["missing_key", "invalid_key"]);
      expect(failures[0]?.client).toMatch(/^peer:/);
      expect(JSON.stringify(events)).not.toContain("invented-key");
    });
  });
});

describe("the key scopes setting", () => {
  const load = (env: Record<string, string>) => () => loadConfig({ SANDBOX_DIR: fx.dir, ...env });

  it("reads SANDGATE_KEY_SCOPES as name:scope+scope pairs", () => {
    const config = loadConfig({ SANDBOX_DIR: "/tmp/x", SANDGATE_API_KEYS: `runner:${RUNNER},auditor:${AUDITOR}`, SANDGATE_KEY_SCOPES: "runner:execute+files,auditor:audit" });
    expect(config.server.keyScopes).toEqual({ runner: ["execute", "files"], auditor: ["audit"] });
  });

  it("refuses an unknown scope and scopes for a key that is not configured", () => {
    expect(load({ SANDGATE_API_KEYS: `runner:${RUNNER}`, SANDGATE_KEY_SCOPES: "runner:execute+root" })).toThrow(/scope "root"; scopes are execute, files, sessions, admin or audit/);
    expect(load({ SANDGATE_API_KEYS: `runner:${RUNNER}`, SANDGATE_KEY_SCOPES: "runnr:execute" })).toThrow(/keyScopes names a key that is not configured/);
  });
});
