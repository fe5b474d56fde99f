// The REST contract through the real server on port 0: every route of the table is called, each
// reply parses with the route's declared response schema (errors with the error schema), and
// params, query and body are parsed strictly with the route's own schemas.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { ClientLimiter } from "../../src/server/client-limiter.js";
import { restRoutes, type RestRoute } from "../../src/server/http/rest-routes.js";
import type { RunningServer } from "../../src/server/index.js";
import { createTools } from "../../src/server/tools.js";
import { errorBodySchema, type WireExecutionResult } from "../../src/server/wire.js";
import { createTestEngine, type TestEngine } from "../helpers.js";
import { expectError, jsonApi, parseSse, serverContext, startTestServer, type Api, type Reply } from "../server-helpers.js";

let fx: TestEngine;
let server: RunningServer;
let api: Api;
let routes: RestRoute[];

beforeAll(async () => {
  fx = createTestEngine({}, { python: 1, javascript: 0, bash: 1 });
  server = await startTestServer(fx.engine, fx.config);
  api = jsonApi(() => server.url);
  // The same table the server registers, for its schemas (its handlers are not called here).
  const ctx = serverContext(fx.engine, fx.config);
  routes = restRoutes({
    ctx,
    tools: createTools(ctx),
    limiter: new ClientLimiter(1),
    streamOperation: () => new Response(null),
  });
});
afterAll(async () => {
  await server?.close();
  await fx?.close();
});

const called = new Set<string>();

function routeOf(method: string, path: string): RestRoute {
  const route = routes.find((r) => r.method === method && r.path === path);
  if (!route) throw new Error(`no route ${method} ${path} in the table`);
  return route;
}

/** Asserts `body` parses with `schema`, showing zod's issues when it does not. */
function expectParses(schema: z.ZodType, body: unknown, what: string): void {
  const parsed = schema.safeParse(body);
  expect(parsed.success ? [] : parsed.error.issues, `${what}: ${JSON.stringify(body).slice(0, 400)}`).toEqual([]);
}

/**
 * Calls `route` (method and table path) at `url` and checks the reply against its schemas: the
 * route's response schema and success status, or the error schema with the status of its code.
 */
async function call<T = unknown>(method: string, path: string, url: string, init: { json?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<Reply<T>> {
  const route = routeOf(method, path);
  called.add(`${method} ${path}`);
  const reply = await api<T>(url, { method: method.toUpperCase(), ...init });
  const what = `${method.toUpperCase()} ${url} -> ${reply.status}`;
  if (reply.status < 400) {
    expect(reply.status, what).toBe(route.successStatus);
    expectParses(route.response, reply.body, what);
  } else if (route.refuse) {
    // A route that answers its own refusals (JSON-RPC) declares their shape in its response schema.
    expectParses(route.response, reply.body, what);
  } else {
    expectParses(errorBodySchema, reply.body, what);
  }
  return reply;
}

describe("every REST route answers what its schemas declare", () => {
  it("status routes", async () => {
    await call("get", "/", "/");
    await call("get", "/health", "/health");
    await call("get", "/languages", "/languages");
    await call("get", "/security/policy", "/security/policy");
    await call("post", "/security/analyze", "/security/analyze", { json: { language: "python", code: "import os\nos.system('ls')" } });
    // The test server keeps no audit log: both audit routes say so with the error schema.
    expectError(await call("get", "/audit", "/audit?since=1h&limit=5"), 503, "AUDIT_UNAVAILABLE");
    expectError(await call("get", "/audit/verify", "/audit/verify"), 503, "AUDIT_UNAVAILABLE");
    await call("get", "/volumes", "/volumes");
    await call("get", "/servers", "/servers");
    // No upstream server here: no tools, and a server that is not one is named as such.
    expect((await call<{ tools: unknown[] }>("get", "/tools", "/tools")).body.tools).toEqual([]);
    expect(expectError(await call("get", "/tools", "/tools?server=nope"), 400, "INVALID_INPUT").message).toContain('no upstream server "nope"');
    const found = await call<{ tools: unknown[] }>("get", "/tools/search", "/tools/search?q=issues&detail=full&limit=5");
    expect(found.status).toBe(200);
    expectError(await call("get", "/tools/search", "/tools/search?q=x&limit=100"), 400, "INVALID_INPUT");
  });

  it("execution, plain and streamed, and a saved full output", async () => {
    const ran = await call<WireExecutionResult>("post", "/execute", "/execute", {
      json: { language: "python", code: "import sys\nsys.stdout.write('s' * 150000 + 'TAIL')\n6 * 7" },
    });
    expect(ran.status).toBe(200);
    expect(ran.body.value).toBe(42);
    const id = /outputs\/([A-Za-z0-9_-]+)\/stdout/.exec(ran.body.full_output?.stdout ?? "")?.[1];
    expect(id, "a shortened output is saved").toBeDefined();
    const saved = await call<string>("get", "/outputs/:id/:stream", `/outputs/${id}/stdout`);
    expect(saved.status).toBe(200);
    expect(saved.body.endsWith("TAIL")).toBe(true);
    expectError(await call("get", "/outputs/:id/:stream", `/outputs/${id}/other`), 404, "OUTPUT_NOT_FOUND");

    const streamed = await fetch(`${server.url}/execute?stream=1`, { method: "POST", body: JSON.stringify({ language: "bash", code: "echo hi" }) });
    expect(streamed.headers.get("content-type")).toMatch(/text\/event-stream/);
    const result = parseSse(await streamed.text()).find((e) => e.event === "result");
    expectParses(routeOf("post", "/execute").response, JSON.parse(result?.data ?? "null"), "the stream's result event");

    expectError(await call("post", "/execute", "/execute", { json: { language: "cobol", code: "x" } }), 400, "UNKNOWN_LANGUAGE");
    expectError(await call("post", "/execute", "/execute", { raw: "{nope" }), 400, "MALFORMED_REQUEST");
  });

  it("approvals: the queue is listed, and deciding an unknown request is 404", async () => {
    const listed = await call<{ approvals: unknown[] }>("get", "/approvals", "/approvals");
    expect(listed.body.approvals).toEqual([]);
    expectError(await call("post", "/approvals/:approval_id", "/approvals/nothing-waits", { json: { approve: true } }), 404, "APPROVAL_NOT_FOUND");
    expectError(await call("get", "/approvals/:approval_id", "/approvals/nothing-waits"), 404, "APPROVAL_NOT_FOUND");
  });

  it("PII: a text comes back tokenized with its entities, and an unknown kind is 400", async () => {
    const done = await call<{ text: string }>("post", "/pii/tokenize", "/pii/tokenize", { json: { text: "write to ann@example.com" } });
    expect(done.body.text).toBe("write to [EMAIL_1]");
    expectError(await call("post", "/pii/tokenize", "/pii/tokenize", { json: { text: "x", types: ["passport"] } }), 400, "INVALID_INPUT");
  });

  it("background jobs: started with 202, read, followed, listed and stopped", async () => {
    const started = await api<WireExecutionResult>("/execute", { json: { language: "bash", code: "echo hi", background: true } });
    expect(started.status).toBe(202);
    expectParses(routeOf("post", "/execute").response, started.body, "a background start");
    const id = started.body.job_id ?? "";
    const read = await call<{ status: string }>("get", "/jobs/:job_id", `/jobs/${id}?wait=10`);
    expect(read.status).toBe(200);
    const followed = await call<string>("get", "/jobs/:job_id/output/:stream", `/jobs/${id}/output/stdout`);
    expect(followed.body).toBe("hi\n");
    await call("get", "/jobs", "/jobs");
    expect((await call("delete", "/jobs/:job_id", `/jobs/${id}`)).status).toBe(200);
    expectError(await call("get", "/jobs/:job_id", "/jobs/job_none"), 404, "JOB_NOT_FOUND");
    expectError(await call("get", "/jobs/:job_id", `/jobs/${id}?wait=31`), 400, "INVALID_INPUT");
  });

  it("sessions and their files", async () => {
    expect((await call("post", "/sessions", "/sessions", { json: { session_id: "contract" } })).status).toBe(201);
    expect((await call("post", "/sessions", "/sessions", { json: {} })).status).toBe(201);
    await call("get", "/sessions", "/sessions");
    await call("get", "/sessions/:session_id", "/sessions/contract");
    await call("put", "/sessions/:session_id/files/content", "/sessions/contract/files/content", { json: { path: "a.txt", content: "hi" } });
    const read = await call<{ content: string }>("get", "/sessions/:session_id/files/content", "/sessions/contract/files/content?path=a.txt", { headers: { accept: "application/json" } });
    expect(read.body.content).toBe("hi");
    const form = '--b\r\nContent-Disposition: form-data; name="file"; filename="up.txt"\r\n\r\nuploaded\r\n--b--\r\n';
    const uploaded = await call<{ files: { path: string }[] }>("post", "/sessions/:session_id/files", "/sessions/contract/files", { raw: form, headers: { "content-type": "multipart/form-data; boundary=b" } });
    expect(uploaded.body.files.map((f) => f.path)).toEqual(["/workspace/up.txt"]);
    const listed = await call<{ entries: { name: string }[] }>("get", "/sessions/:session_id/files", "/sessions/contract/files");
    expect(listed.body.entries.map((e) => e.name)).toContain("a.txt");
    expectError(await call("get", "/sessions/:session_id/files/content", "/sessions/contract/files/content?path=none.txt"), 404, "FILE_NOT_FOUND");
    expectError(await call("get", "/sessions/:session_id/files", "/sessions/contract/files?path=../.."), 400, "PATH_INVALID");
    expectError(await call("get", "/sessions/:session_id", "/sessions/no-such-session"), 404, "SESSION_NOT_FOUND");
    const forked = await call<{ session_id: string }>("post", "/sessions/:session_id/fork", "/sessions/contract/fork", { json: { new_session_id: "contract-fork" } });
    expect(forked.status).toBe(201);
    expectError(await call("post", "/sessions/:session_id/fork", "/sessions/no-such-session/fork", { json: {} }), 404, "SESSION_NOT_FOUND");
    await call("delete", "/sessions/:session_id", "/sessions/contract-fork");
    await call("delete", "/sessions/:session_id", "/sessions/contract");
    expectError(await call("get", "/sessions/:session_id", "/sessions/contract"), 410, "SESSION_EXPIRED");
  });

  it("the MCP conveniences, with their JSON-RPC errors", async () => {
    await call("get", "/mcp/tools", "/mcp/tools");
    // GET /mcp/resources lists what resources/list and resources/templates/list list, each of which resources/read then reads.
    const resources = await call<{ resources: Array<{ uri: string }>; resource_templates: Array<{ uriTemplate: string }> }>("get", "/mcp/resources", "/mcp/resources");
    const viaRpc = await call<{ result: { resources: unknown[] } }>("post", "/mcp/execute", "/mcp/execute", { json: { jsonrpc: "2.0", id: 5, method: "resources/list" } });
    expect(resources.body.resources).toEqual(viaRpc.body.result.resources);
    expect(resources.body.resource_templates.map((t) => t.uriTemplate)).toEqual(expect.arrayContaining([expect.stringMatching(/^sandgate:\/\/outputs\//)]));
    const policy = await call<{ result: { contents: Array<{ text: string }> } }>("post", "/mcp/execute", "/mcp/execute", {
      json: { jsonrpc: "2.0", id: 6, method: "resources/read", params: { uri: resources.body.resources[0]!.uri } },
    });
    expect(JSON.parse(policy.body.result.contents[0]!.text)).toHaveProperty("limits");
    await call("get", "/mcp/protocol-info", "/mcp/protocol-info");
    const ok = await call("post", "/mcp/execute", "/mcp/execute", { json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "execute_command", arguments: { command: "echo hi" } } } });
    expect(ok.status).toBe(200);
    const listed = await call<{ result: { tools: unknown[] } }>("post", "/mcp/execute", "/mcp/execute", { json: { jsonrpc: "2.0", id: 2, method: "tools/list" } });
    expect(listed.body.result.tools.length).toBeGreaterThan(5);
    expect((await call("post", "/mcp/execute", "/mcp/execute", { json: { jsonrpc: "2.0", id: 3, method: "no/such/method" } })).status).toBe(404);
    expect((await call("post", "/mcp/execute", "/mcp/execute", { json: { jsonrpc: "2.0", id: 4, method: "tools/call", extra: 1 } })).status).toBe(400);
    expect((await call("post", "/mcp/execute", "/mcp/execute", { raw: "[1," })).status).toBe(400);
  });

  it("covers the whole table", () => {
    expect([...called].sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
  });
});

describe("params, query and body are parsed with the route's schemas", () => {
  it("POST /sessions with a number as session_id is 400 INVALID_INPUT naming the field, and starts no session", async () => {
    const before = (await api<{ sessions: unknown[] }>("/sessions")).body.sessions.length;
    const err = expectError(await api("/sessions", { json: { session_id: 5 } }), 400, "INVALID_INPUT");
    expect(err.message).toContain("session_id");
    expect(err.data).toMatchObject({ field: "session_id", location: "body" });
    expect((await api<{ sessions: unknown[] }>("/sessions")).body.sessions.length).toBe(before);
  });

  it("an unknown body field is 400 INVALID_INPUT naming it", async () => {
    const err = expectError(await api("/sessions", { json: { session_id: "typo", sesion_ttl: 60 } }), 400, "INVALID_INPUT");
    expect(err.message).toContain('"sesion_ttl"');
    expect(err.message).toContain("session_id");
    expectError(await api("/sessions/typo"), 404, "SESSION_NOT_FOUND");
    const toolErr = expectError(await api("/execute", { json: { language: "python", code: "1", timeout: 5, extra: true } }), 400, "INVALID_INPUT");
    expect(toolErr.message).toContain('unknown argument "extra"');
    expect(toolErr.data).toMatchObject({ field: "extra" });
  });

  it("a body of many made-up fields is refused with a short message naming a few of them", async () => {
    const json = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`${"k".repeat(200)}${i}`, 1]));
    const err = expectError(await api("/sessions", { json }), 400, "INVALID_INPUT");
    expect(err.message).toContain("and 4995 more");
    expect(err.message.length).toBeLessThan(1000);
    expect(String((err.data as { field: string }).field).length).toBeLessThan(100);
    const tool = expectError(await api("/execute", { json: { language: "python", code: "1", ...json } }), 400, "INVALID_INPUT");
    expect(tool.message).toContain("and 4995 more");
    expect(tool.message.length).toBeLessThan(1000);
  });

  it("a body that is not a JSON object is 400 INVALID_INPUT", async () => {
    for (const raw of ["[]", "5", "null", '"x"']) {
      const err = expectError(await api("/sessions", { raw }), 400, "INVALID_INPUT");
      expect(err.message, raw).toMatch(/JSON object/);
    }
  });

  it("an unknown query parameter is 400 INVALID_INPUT naming it, on routes with and without a query", async () => {
    const files = expectError(await api("/sessions/q/files/content?path=a.txt&encodng=base64"), 400, "INVALID_INPUT");
    expect(files.message).toContain('"encodng"');
    expect(files.message).toContain("encoding");
    const plain = expectError(await api("/sessions?limit=5"), 400, "INVALID_INPUT");
    expect(plain.message).toContain('"limit"');
  });

  it("a query parameter of the wrong form is 400 INVALID_INPUT naming it", async () => {
    const err = expectError(await api("/tools/search?q=x&limit=ten"), 400, "INVALID_INPUT");
    expect(err.message).toContain("limit");
    expect(err.data).toMatchObject({ field: "limit", location: "query parameter" });
    expectError(await api("/sessions/q/files/content?path=a.txt&encoding=latin1"), 400, "INVALID_INPUT");
  });

  it("the OpenAPI document shows the strict bodies and every query parameter", async () => {
    const doc = (await api<{ paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { additionalProperties?: unknown } }> }; parameters?: { name: string; in: string }[] }>> }>("/openapi.json")).body;
    expect(doc.paths["/sessions"]?.post?.requestBody?.content["application/json"]?.schema.additionalProperties).toBe(false);
    expect(doc.paths["/sessions/{session_id}/files/content"]?.get?.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual(["path:session_id", "query:path", "query:encoding"]);
    // Raw bodies: the file's bytes for PUT, multipart for POST /files, documented beside the JSON form.
    expect(Object.keys(doc.paths["/sessions/{session_id}/files/content"]?.put?.requestBody?.content ?? {})).toEqual(["application/json", "application/octet-stream"]);
    expect(Object.keys(doc.paths["/sessions/{session_id}/files"]?.post?.requestBody?.content ?? {})).toEqual(["multipart/form-data"]);
  });
});
