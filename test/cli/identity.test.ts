// Who a caller is, through the real server on port 0 with real sandboxes: API key names as
// identities, sessions scoped per identity, per-identity quotas with Retry-After, and CORS
// that never lets another origin run code.

import { createServer, type Server as NodeHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { describe, expect, it } from "vitest";
import { loadConfig, maskSecrets, type ServerConfig } from "../../src/config/index.js";
import type { WireExecutionResult } from "../../src/server/wire.js";
import { useTestEngine, waitFor } from "../helpers.js";
import { callTool, connectMcp, toolText, type HttpClient } from "../fixtures/mcp-client.js";
import { bearer, expectError, rawRequest, startTestServer, withServer as withTestServer, type Api, type Reply } from "../server-helpers.js";

const ALICE = "alice-key-0123456789";
const BOB = "bob-key-0123456789ab";
const KEYS = { alice: ALICE, bob: BOB };

const fx = useTestEngine({ SANDGATE_SESSIONS_PER_CALLER: "3" }, { python: 1, javascript: 0, bash: 1 });

const withServer = (overrides: Partial<ServerConfig>, fn: Parameters<typeof withTestServer>[2]): Promise<void> => withTestServer(fx, overrides, fn);

function run(api: Api, key: string | undefined, args: Record<string, unknown>): Promise<Reply<WireExecutionResult>> {
  return api<WireExecutionResult>("/execute", { json: args, ...(key ? { headers: bearer(key) } : {}) });
}

const mcpClient = (url: string, key?: string): Promise<HttpClient> => connectMcp(url, { name: "identity-test", ...(key ? { headers: bearer(key) } : {}) });

describe("the caller's identity", () => {
  it("does not give invented Authorization headers extra concurrency: without keys the peer is one caller", async () => {
    await withServer({ maxConcurrentPerClient: 1 }, async (_s, api) => {
      const slow = run(api, undefined, { language: "python", code: "import time\ntime.sleep(3)\n'slept'", session_id: "slow-one" });
      try {
        expect(await waitFor(() => fx.engine.sessions.listAll().some((x) => x.id === "slow-one" && x.busy), 10_000)).toBe(true);
        for (const header of ["Bearer invented-1", "Bearer invented-2", "Basic Zm9vOmJhcg=="]) {
          const second = await api("/execute", { json: { language: "bash", code: "echo extra" }, headers: { authorization: header } });
          const err = expectError(second, 429, "TOO_MANY_REQUESTS");
          expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);
          expect(err.data?.retry_after).toBe(Number(second.headers.get("retry-after")));
          expect(err.message).toMatch(/wait for one to finish/);
        }
        expect((await slow).body).toMatchObject({ status: "ok", value: "slept" });
      } finally {
        await slow.catch(() => undefined);
        await api("/sessions/slow-one", { method: "DELETE" });
      }
    });
  });

  it("with API keys refuses invented keys with 401 and caps each key's concurrency on its own", async () => {
    await withServer({ apiKeys: KEYS, maxConcurrentPerClient: 1 }, async (_s, api) => {
      expectError(await api("/execute", { json: { language: "bash", code: "echo x" }, headers: bearer("invented-key-0123456789") }), 401, "UNAUTHORIZED");
      const slow = run(api, ALICE, { language: "python", code: "import time\ntime.sleep(3)\n'slept'", session_id: "alice-slow" });
      try {
        expect(await waitFor(() => fx.engine.sessions.listAll().some((x) => x.id === "alice-slow" && x.busy), 10_000)).toBe(true);
        expectError(await run(api, ALICE, { language: "bash", code: "echo second" }), 429, "TOO_MANY_REQUESTS");
        // Bob is another caller: his slot is his own.
        expect((await run(api, BOB, { language: "bash", code: "echo bob" })).body).toMatchObject({ status: "ok", stdout: "bob\n" });
        expect((await slow).body).toMatchObject({ status: "ok", value: "slept" });
      } finally {
        await slow.catch(() => undefined);
        await api("/sessions/alice-slow", { method: "DELETE", headers: bearer(ALICE) });
      }
    });
  });

  it("gives two API keys that both use session \"default\" two separate sessions: state and workspace", async () => {
    await withServer({ apiKeys: KEYS }, async (_s, api) => {
      try {
        expect((await run(api, ALICE, { language: "python", session_id: "default", code: "x = 'alice'\nopen('/workspace/who.txt', 'w').write('alice')" })).body.status).toBe("ok");
        const bob = await run(api, BOB, { language: "python", session_id: "default", code: "import os\n['x' in globals(), os.listdir('/workspace')]" });
        expect(bob.body).toMatchObject({ status: "ok", value: [false, []] });
        await run(api, BOB, { language: "python", session_id: "default", code: "x = 'bob'" });
        expect((await run(api, ALICE, { language: "python", session_id: "default", code: "x" })).body.value).toBe("alice");
        const file = await api<{ content: string }>("/sessions/default/files/content?path=who.txt", { headers: { ...bearer(ALICE), accept: "application/json" } });
        expect(file.body.content).toBe("alice");
        expectError(await api("/sessions/default/files/content?path=who.txt", { headers: bearer(BOB) }), 404, "FILE_NOT_FOUND");
      } finally {
        for (const key of [ALICE, BOB]) await api("/sessions/default", { method: "DELETE", headers: bearer(key) });
      }
    });
  });

  it("shares one identity across all MCP sessions and REST calls of one API key", async () => {
    await withServer({ apiKeys: KEYS }, async (s, api) => {
      const first = await mcpClient(s.url, ALICE);
      const second = await mcpClient(s.url, ALICE);
      try {
        await callTool(first.client, "execute_code", { language: "python", session_id: "shared", code: "n = 41" });
        const seen = await callTool(second.client, "execute_code", { language: "python", session_id: "shared", code: "n + 1" });
        expect(seen.structuredContent).toMatchObject({ status: "ok", value: 42 });
        expect((await run(api, ALICE, { language: "python", session_id: "shared", code: "n" })).body.value).toBe(41);
        // Bob cannot take over an MCP session of Alice's by its id.
        const hijack = await rawRequest(`${s.url}/mcp`, {
          method: "POST",
          headers: { ...bearer(BOB), "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": first.transport.sessionId ?? "" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
        });
        expect(hijack.status).toBe(404);
      } finally {
        await api("/sessions/shared", { method: "DELETE", headers: bearer(ALICE) });
        await Promise.all([first.client.close(), second.client.close()]);
      }
    });
  });
});

describe("sessions belong to their caller", () => {
  it("another caller cannot list, read, write, run in or stop a session, and learns nothing of it", async () => {
    await withServer({ apiKeys: KEYS }, async (s, api) => {
      try {
        await run(api, ALICE, { language: "python", session_id: "secret", code: "token = 's3cr3t'\nopen('/workspace/plan.txt', 'w').write('the plan')" });
        await run(api, ALICE, { language: "bash", session_id: "stopped-one", code: "true" });
        expect((await api("/sessions/stopped-one", { method: "DELETE", headers: bearer(ALICE) })).status).toBe(200);

        const list = await api<{ sessions: { session_id: string }[] }>("/sessions", { headers: bearer(BOB) });
        expect(list.body.sessions.map((x) => x.session_id)).not.toContain("secret");
        // Alice's live and ended sessions look exactly like ids no one ever used.
        for (const id of ["secret", "stopped-one", "never-used"]) {
          const one = expectError(await api(`/sessions/${id}`, { headers: bearer(BOB) }), 404, "SESSION_NOT_FOUND");
          expect(one.message).toBe(`no session with id ${id}; create one first or omit session_id for a stateless call`);
          expectError(await api(`/sessions/${id}`, { method: "DELETE", headers: bearer(BOB) }), 404, "SESSION_NOT_FOUND");
        }
        const read = expectError(await api("/sessions/secret/files/content?path=plan.txt", { headers: bearer(BOB) }), 404, "SESSION_NOT_FOUND");
        expect(read.message).toBe("no session with id secret; create one first or omit session_id for a stateless call");
        expectError(await api("/sessions/secret/files", { headers: bearer(BOB) }), 404, "SESSION_NOT_FOUND");
        await api("/sessions/secret/files/content", { method: "PUT", headers: bearer(BOB), json: { path: "plan.txt", content: "bob's plan" } });
        const ran = await run(api, BOB, { language: "python", session_id: "secret", code: "[globals().get('token'), open('/workspace/plan.txt').read()]" });
        expect(ran.body).toMatchObject({ status: "ok", value: [null, "bob's plan"] });

        // Over MCP with Bob's key: the same.
        const bob = await mcpClient(s.url, BOB);
        try {
          const sessions = await callTool(bob.client, "get_sessions", { session_id: "stopped-one" });
          expect(sessions.isError).toBe(true);
          expect(toolText(sessions)).toMatch(/SESSION_NOT_FOUND/);
        } finally {
          await bob.client.close();
        }

        // Alice's session is untouched by all of it.
        const mine = await run(api, ALICE, { language: "python", session_id: "secret", code: "[token, open('/workspace/plan.txt').read()]" });
        expect(mine.body).toMatchObject({ status: "ok", value: ["s3cr3t", "the plan"] });
        const aliceList = await api<{ sessions: { session_id: string }[] }>("/sessions", { headers: bearer(ALICE) });
        expect(aliceList.body.sessions.map((x) => x.session_id)).toEqual(["secret"]);
      } finally {
        for (const key of [ALICE, BOB]) await api("/sessions/secret", { method: "DELETE", headers: bearer(key) });
      }
    });
  });

  it("caps the sessions one caller holds with 429 TOO_MANY_SESSIONS and Retry-After, leaving room for others", async () => {
    await withServer({ apiKeys: KEYS }, async (_s, api) => {
      const ids = ["q1", "q2", "q3"];
      try {
        for (const id of ids) expect((await api("/sessions", { json: { session_id: id }, headers: bearer(ALICE) })).status).toBe(201);
        const over = await api("/sessions", { json: { session_id: "q4" }, headers: bearer(ALICE) });
        const err = expectError(over, 429, "TOO_MANY_SESSIONS");
        expect(err.message).toMatch(/stop one/);
        expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(err.data?.retry_after).toBe(Number(over.headers.get("retry-after")));
        expectError(await run(api, ALICE, { language: "bash", session_id: "q5", code: "true" }), 429, "TOO_MANY_SESSIONS");
        // Bob still gets a session.
        expect((await run(api, BOB, { language: "bash", session_id: "q1", code: "echo bob" })).body).toMatchObject({ status: "ok", stdout: "bob\n" });
        // Stopping one frees Alice's slot.
        expect((await api("/sessions/q1", { method: "DELETE", headers: bearer(ALICE) })).status).toBe(200);
        expect((await api("/sessions", { json: { session_id: "q4" }, headers: bearer(ALICE) })).status).toBe(201);
      } finally {
        for (const id of [...ids, "q4"]) await api(`/sessions/${id}`, { method: "DELETE", headers: bearer(ALICE) });
        await api("/sessions/q1", { method: "DELETE", headers: bearer(BOB) });
      }
    });
  });
});

describe("MCP sessions do not leak", () => {
  it("300 clients that initialize and vanish without DELETE do not lock out a new client", async () => {
    await withServer({ maxMcpSessions: 4 }, async (s, api) => {
      for (let i = 0; i < 300; i++) {
        const { client } = await mcpClient(s.url);
        await client.close(); // the SDK's close() sends no DELETE
      }
      const health = await api<{ mcp_sessions: number }>("/health");
      expect(health.body.mcp_sessions).toBeLessThanOrEqual(4);
      const late = await mcpClient(s.url);
      try {
        const result = await callTool(late.client, "execute_code", { language: "bash", code: "echo in" });
        expect(result.structuredContent).toMatchObject({ status: "ok", stdout: "in\n" });
      } finally {
        await late.client.close();
      }
    });
  });

  it("an API key that opens session after session evicts its own, never another key's", async () => {
    await withServer({ apiKeys: KEYS, maxMcpSessions: 4, maxMcpSessionsPerIdentity: 2 }, async (s) => {
      const bob = await mcpClient(s.url, BOB);
      const opened: Client[] = [];
      try {
        for (let i = 0; i < 10; i++) opened.push((await mcpClient(s.url, ALICE)).client);
        expect((await bob.client.listTools()).tools.length).toBeGreaterThan(0);
        // Alice's latest sessions work; her oldest were closed for them.
        expect((await opened[9]!.listTools()).tools.length).toBeGreaterThan(0);
        await expect(opened[0]!.listTools()).rejects.toThrow(/404|not found/i);
      } finally {
        await Promise.all([bob.client, ...opened].map((c) => c.close()));
      }
    });
  });

  it("refuses a new client with 429 and Retry-After only when every session is running a call", async () => {
    await withServer({ maxMcpSessions: 1 }, async (s) => {
      const busy = await mcpClient(s.url);
      const running = callTool(busy.client, "execute_code", { language: "python", session_id: "busy-one", code: "import time\ntime.sleep(3)\n'done'" });
      try {
        expect(await waitFor(() => fx.engine.sessions.listAll().some((x) => x.id === "busy-one" && x.busy), 10_000)).toBe(true);
        const refused = await rawRequest(`${s.url}/mcp`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "late", version: "1" } } }),
        });
        expect(refused.status).toBe(429);
        expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
        expect(refused.json).toMatchObject({ error: { data: { retry_after: Number(refused.headers["retry-after"]) } } });
        expect((await running).structuredContent).toMatchObject({ value: "done" });
        // The call is over: now the idle session gives way.
        const next = await mcpClient(s.url);
        await next.client.close();
      } finally {
        await running.catch(() => undefined);
        await busy.client.close();
      }
    });
  });

  it("closes sessions that made no tool call within server.mcpUnusedSessionS once their client is gone; the caller's execution sessions outlive them", async () => {
    await withServer({ mcpUnusedSessionS: 1 }, async (s, api) => {
      const gone = await mcpClient(s.url);
      const listening = await mcpClient(s.url);
      const used = await mcpClient(s.url);
      try {
        await gone.client.listTools();
        await listening.client.listTools();
        await callTool(used.client, "execute_code", { language: "bash", session_id: "kept", code: "echo used" });
        const mcpCount = async (): Promise<number> => (await api<{ mcp_sessions: number }>("/health")).body.mcp_sessions;
        expect(await mcpCount()).toBe(3);
        // Like the Inspector CLI or an SDK client's close(): the client leaves without DELETE.
        await gone.client.close();
        const deadline = Date.now() + 15_000;
        while ((await mcpCount()) > 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
        expect(await mcpCount()).toBe(2);
        // A client still connected (its GET stream open) that has not called a tool yet keeps its session.
        await new Promise((r) => setTimeout(r, 2500));
        expect(await mcpCount()).toBe(2);
        expect((await listening.client.listTools()).tools.length).toBeGreaterThan(0);
        expect((await callTool(used.client, "execute_code", { language: "bash", session_id: "kept", code: "echo still" })).structuredContent).toMatchObject({ stdout: "still\n" });
      } finally {
        await Promise.all([listening.client.close(), used.client.close()]);
      }
      // Closing the server ends every MCP session; the execution session is the caller's, not theirs.
    });
    expect(fx.engine.sessions.listAll().find((x) => x.id === "kept")).toMatchObject({ owner: "local" });
    await fx.engine.sessions.stop("kept", "local");
  });
});

describe("named API keys in the configuration", () => {
  it("reads SANDGATE_API_KEYS, keeps SANDGATE_API_KEY as the key named default, and masks both", () => {
    const config = loadConfig({ SANDBOX_DIR: fx.dir, SANDGATE_API_KEYS: `alice:${ALICE}, bob:${BOB}`, SANDGATE_API_KEY: "default-key-0123456789" });
    expect(config.server.apiKeys).toEqual(KEYS);
    expect(config.server.apiKey).toBe("default-key-0123456789");
    const shown = JSON.stringify(maskSecrets(config));
    for (const key of [ALICE, BOB, "default-key-0123456789"]) expect(shown).not.toContain(key);
    expect(maskSecrets(config).server.apiKeys).toEqual({ alice: "********", bob: "********" });
  });

  it("refuses malformed, short, duplicate and shared keys without showing them", () => {
    const load = (env: Record<string, string>) => () => loadConfig({ SANDBOX_DIR: fx.dir, ...env });
    expect(load({ SANDGATE_API_KEYS: `alice=${ALICE}` })).toThrow(/SANDGATE_API_KEYS entry 1 is not of the form name:key/);
    expect(load({ SANDGATE_API_KEYS: "alice:short" })).toThrow(/server\.apiKeys\.alice: use at least 16 characters/);
    expect(load({ SANDGATE_API_KEYS: `alice:${ALICE},alice:${BOB}` })).toThrow(/appears twice/);
    expect(load({ SANDGATE_API_KEYS: `alice:${ALICE},bob:${ALICE}` })).toThrow(/every API key must be different/);
    expect(load({ SANDGATE_API_KEYS: `default:${ALICE}`, SANDGATE_API_KEY: BOB })).toThrow(/do not also list a key named "default"/);
    for (const env of [{ SANDGATE_API_KEYS: `alice=${ALICE}` }, { SANDGATE_API_KEYS: `alice:${ALICE},bob:${ALICE}` }]) {
      expect(load(env)).toThrow(expect.objectContaining({ message: expect.not.stringContaining(ALICE) as string }) as Error);
    }
  });
});

describe("CORS", () => {
  it("refuses CORS without a list of origins at config load and at start", async () => {
    expect(() => loadConfig({ SANDBOX_DIR: fx.dir, MCP_ENABLE_CORS: "true" })).toThrow(/server\.cors\.origins[\s\S]*SANDGATE_CORS_ORIGINS/);
    const listed = loadConfig({ SANDBOX_DIR: fx.dir, MCP_ENABLE_CORS: "true", SANDGATE_CORS_ORIGINS: "http://app.example" });
    expect(listed.server.cors).toEqual({ enabled: true, origins: ["http://app.example"] });
    await expect(startTestServer(fx.engine, fx.config, { cors: { enabled: true, origins: [] } })).rejects.toMatchObject({
      code: "CONFIG_INVALID",
      message: expect.stringMatching(/server\.cors\.origins/),
    });
  });

  it("with an origin list, a page on another local port can neither run code nor read answers", async () => {
    const page: NodeHttpServer = createServer((_req, res) => res.end("<script>fetch('/execute')</script>"));
    await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
    const other = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    try {
      await withServer({ cors: { enabled: true, origins: ["http://app.example"] } }, async (s) => {
        const marker = `cross-origin-ran-${Date.now()}`;
        const simple = await rawRequest(`${s.url}/execute`, {
          method: "POST",
          headers: { origin: other, "content-type": "text/plain;charset=UTF-8" },
          body: JSON.stringify({ language: "bash", code: `echo ${marker}` }),
        });
        expect(simple.status).toBe(403);
        expect(simple.text).not.toContain(marker);
        expect(simple.headers["access-control-allow-origin"]).toBeUndefined();
        const mcp = await rawRequest(`${s.url}/mcp`, {
          method: "POST",
          headers: { origin: other, "content-type": "text/plain" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "page", version: "1" } } }),
        });
        expect(mcp.status).toBe(403);
        const preflight = await rawRequest(`${s.url}/execute`, {
          method: "OPTIONS",
          headers: { origin: other, "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
        });
        expect(preflight.status).toBe(403);
        expect(preflight.headers["access-control-allow-origin"]).toBeUndefined();
        // The listed origin passes.
        const listed = await rawRequest(`${s.url}/languages`, { headers: { origin: "http://app.example" } });
        expect(listed.status).toBe(200);
        expect(listed.headers["access-control-allow-origin"]).toBe("http://app.example");
      });
    } finally {
      await new Promise((resolve) => page.close(resolve));
    }
  });
});
