// The REST API over real HTTP on port 0, with real bubblewrap sandboxes behind it: status
// routes, execution (plain and streamed), sessions and files, bad input, MCP conveniences.
// The guards at the door and hang-ups are in rest-safety.test.ts.

import { existsSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import type { WireExecutionResult } from "../../src/server/wire.js";
import { expectError, useRestServer, parseSse, type ErrorBody, type JsonRpcReply, type Reply } from "../server-helpers.js";

const MAX_CODE_BYTES = 4096;
const MAX_BODY_BYTES = 64 * 1024;

const rest = useRestServer({ maxCodeBytes: MAX_CODE_BYTES, maxBodyBytes: MAX_BODY_BYTES });
const { api } = rest;

const execute = (args: Record<string, unknown>): Promise<Reply<WireExecutionResult>> => api<WireExecutionResult>("/execute", { json: args });

/** The value at a path of nested objects, or undefined. */
function dig(value: unknown, ...keys: string[]): unknown {
  return keys.reduce<unknown>((v, k) => (typeof v === "object" && v !== null ? (v as Record<string, unknown>)[k] : undefined), value);
}


describe("status and documents", () => {
  it("GET / names the service and its endpoints", async () => {
    const { status, body } = await api("/");
    expect(status).toBe(200);
    expect(body).toMatchObject({ name: "sandgate", version: "test", status: "ok", mcp: "/mcp", docs: "/docs", openapi: "/openapi.json" });
  });

  it("GET /health reports version, active protections, pool and sessions", async () => {
    const { status, body } = await api<{ pool: Record<string, unknown> }>("/health");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: "ok",
      version: "test",
      uptime_s: expect.any(Number),
      sandbox: { bubblewrap: expect.stringMatching(/bwrap/), namespaces: expect.arrayContaining(["user", "pid", "network", "mount"]), seccomp: expect.any(Boolean), freezes_idle_sessions: expect.any(Boolean) },
      sessions: { active: expect.any(Number), max: rest.fx.config.sessions.max },
      pool: { python: { target: 1 }, javascript: { target: 1 }, bash: { target: 1 } },
    });
    expect(Object.keys(body.pool).sort()).toEqual(["bash", "javascript", "python"]);
  });

  it("GET /languages lists the four languages with interpreter versions", async () => {
    const { status, body } = await api<{ languages: { name: string; version: string | null; file_extensions: string[] }[] }>("/languages");
    expect(status).toBe(200);
    expect(body.languages.map((l) => l.name)).toEqual(["python", "javascript", "typescript", "bash"]);
    for (const lang of body.languages) {
      expect(lang.version, lang.name).toMatch(/\d+\.\d+/);
      expect(lang.file_extensions.length).toBeGreaterThan(0);
    }
    expect(body.languages.find((l) => l.name === "python")?.version).toMatch(/^Python 3\./);
  });

  it("GET /security/policy shows the configured limits and how the workspace quota is enforced", async () => {
    await rest.fx.engine.sessions.filesystems.state();
    const { status, body } = await api("/security/policy");
    expect(status).toBe(200);
    const { limits } = rest.fx.config;
    expect(limits.maxExecutionTimeS).toBe(20);
    expect(body).toMatchObject({
      languages: ["python", "javascript", "typescript", "bash"],
      limits: {
        max_execution_time_s: 20,
        max_memory_mb: limits.maxMemoryMb,
        max_processes: limits.maxProcesses,
        max_file_size_mb: limits.maxFileSizeMb,
        max_code_bytes: MAX_CODE_BYTES,
        output_shown_bytes: limits.maxOutputSize,
      },
      sessions: {
        max: rest.fx.config.sessions.max,
        workspace: {
          max_mb: rest.fx.config.limits.maxWorkspaceMb,
          max_inodes: rest.fx.config.limits.maxWorkspaceInodes,
          enforcement: process.getuid?.() === 0 && existsSync("/dev/loop-control") ? "filesystem" : "directory",
        },
      },
      isolation: { sandbox: "bubblewrap" },
      http: { api_key_required: false, cors: false, max_body_bytes: MAX_BODY_BYTES },
    });
  });

  it("GET /openapi.json is an OpenAPI 3.1 document of the routes", async () => {
    const { status, body } = await api<{ openapi: string; paths: Record<string, Record<string, unknown>> }>("/openapi.json");
    expect(status).toBe(200);
    expect(body).toMatchObject({ openapi: "3.1.0", info: { title: "sandgate", version: "test" } });
    for (const path of ["/execute", "/sessions", "/sessions/{session_id}", "/sessions/{session_id}/files", "/sessions/{session_id}/files/content", "/mcp/tools", "/mcp/execute"]) {
      expect(body.paths[path], path).toBeDefined();
    }
    expect(Object.keys(body.paths["/sessions/{session_id}/files/content"]!).sort()).toEqual(["get", "put"]);
    const schema = dig(body, "paths", "/execute", "post", "requestBody", "content", "application/json", "schema");
    expect(schema).toMatchObject({ type: "object", required: expect.arrayContaining(["code", "language"]) });
    expect(Object.keys(dig(schema, "properties") as object)).toEqual(expect.arrayContaining(["code", "language", "session_id", "timeout"]));
    expect(dig(body, "paths", "/execute", "post", "responses", "200", "content", "text/event-stream")).toBeDefined();
    const params = dig(body, "paths", "/sessions/{session_id}/files/content", "get", "parameters");
    expect(params).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "session_id", in: "path", required: true }), expect.objectContaining({ name: "path", in: "query", required: true })]),
    );
  });

  it("GET /docs is an HTML page that documents /execute", async () => {
    const { status, headers, body } = await api<string>("/docs");
    expect(status).toBe(200);
    expect(headers.get("content-type")).toMatch(/text\/html/);
    expect(body).toMatch(/<html/i);
    expect(body).toContain("/execute");
    expect(body).toContain("/sessions/{session_id}/files/content");
  });
});

describe("POST /execute", () => {
  it("runs Python and returns stdout and the last expression's value", async () => {
    const { status, body } = await execute({ language: "python", code: "print('hi')\nsum(range(10))" });
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "ok", exit_code: 0, stdout: "hi\n", value: 45, session_id: null, truncated: false });
    expect(typeof body.duration_ms).toBe("number");
  });

  it("runs JavaScript", async () => {
    const { status, body } = await execute({ language: "javascript", code: "console.log([1, 2, 3].map((x) => x * 2).join(','));\n6 * 7" });
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "ok", stdout: "2,4,6\n", value: 42 });
  });

  it("runs TypeScript with type annotations", async () => {
    const code = "interface P { x: number }\nconst p: P = { x: 20 };\nfunction twice(n: number): number { return n * 2 }\nconsole.log(typeof p);\ntwice(p.x) + 2";
    const { status, body } = await execute({ language: "typescript", code });
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "ok", stdout: "object\n", value: 42 });
  });

  it("runs Bash", async () => {
    const { status, body } = await execute({ language: "bash", code: "for i in 1 2 3; do echo \"n=$i\"; done | tail -n 1\necho err >&2" });
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "ok", exit_code: 0, stdout: "n=3\n", stderr: "err\n" });
  });

  it("reports a failing program as a result with status error and a traceback (HTTP 200)", async () => {
    const { status, body } = await execute({ language: "python", code: "def f():\n    raise ValueError('boom')\nf()" });
    expect(status).toBe(200);
    expect(body.status).toBe("error");
    expect(body.error?.type).toBe("ValueError");
    expect(body.error?.message).toContain("boom");
    expect(body.error?.traceback).toMatch(/Traceback[\s\S]*ValueError: boom/);
  });

  it("stops an infinite loop at the requested timeout", async () => {
    const { status, body } = await execute({ language: "python", code: "while True:\n    pass", timeout: 1 });
    expect(status).toBe(200);
    expect(body.status).toBe("timeout");
    expect(body.error?.type).toBe("Timeout");
    expect(body.duration_ms).toBeLessThan(10_000);
  });

  it("keeps variables between calls with the same session_id", async () => {
    const session_id = "rest-persist";
    try {
      const first = await execute({ language: "python", code: "counter = 41", session_id });
      expect(first.body).toMatchObject({ status: "ok", session_id });
      const second = await execute({ language: "python", code: "counter += 1\ncounter", session_id });
      expect(second.body).toMatchObject({ status: "ok", value: 42, session_id });
    } finally {
      await api(`/sessions/${session_id}`, { method: "DELETE" });
    }
  });

  it("streams stdout as server-sent events while the code runs, then the full result", async () => {
    const res = await fetch(`${rest.server.url}/execute?stream=1`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ language: "python", code: "import time\nprint('first', flush=True)\ntime.sleep(1)\nprint('second')\n7 * 6" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    // Read chunk by chunk to see that output arrives before the run has ended.
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let sawFirstBeforeResult = false;
    for (;;) {
      const { done, value } = (await reader.read()) as { done: boolean; value?: Uint8Array };
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (text.includes("first") && !text.includes("event: result")) sawFirstBeforeResult = true;
    }
    expect(sawFirstBeforeResult).toBe(true);
    const events = parseSse(text);
    const names = events.map((e) => e.event);
    expect(names[names.length - 1]).toBe("result");
    expect(names.filter((n) => n === "result")).toHaveLength(1);
    const stdoutEvents = events.filter((e) => e.event === "stdout").map((e) => (JSON.parse(e.data) as { text: string }).text);
    expect(stdoutEvents.length).toBeGreaterThan(0);
    expect(stdoutEvents.join("")).toBe("first\nsecond\n");
    expect(names.indexOf("stdout")).toBeLessThan(names.indexOf("result"));
    const result = JSON.parse(events[events.length - 1]!.data) as WireExecutionResult;
    expect(result).toMatchObject({ status: "ok", stdout: "first\nsecond\n", value: 42, session_id: null });
  });

  it("refuses arguments of the wrong type on the streaming variant with a JSON 400, not a stream", async () => {
    const reply = await api("/execute?stream=1", { json: { language: 5, code: "x" } });
    expect(expectError(reply, 400, "INVALID_INPUT").data?.field).toBe("language");
    expectError(await api("/execute?stream=yes", { json: { language: "python", code: "1" } }), 400, "INVALID_INPUT");
  });

  // A stream's 200 goes out before the code runs, so everything that would refuse it is checked first.
  it("refuses a request it can never run with the same 4xx JSON as without ?stream=1", async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ language: "cobol", code: "x" }, 400, "UNKNOWN_LANGUAGE"],
      [{ language: "python", code: "" }, 400, "CODE_EMPTY"],
      [{ language: "python", code: "1", timeout: 1000 }, 400, "LIMIT_EXCEEDED"],
      [{ language: "python", code: "#".repeat(MAX_CODE_BYTES + 1) }, 413, "CODE_TOO_LARGE"],
    ];
    for (const [body, status, code] of cases) {
      expectError(await api("/execute", { json: body }), status, code);
      expectError(await api("/execute?stream=1", { json: body }), status, code);
    }
  });
});

describe("sessions and files", () => {
  it("creates, lists, shares files with code, and stops a session", async () => {
    const created = await api<{ session_id: string; busy: boolean; calls: number }>("/sessions", { json: {} });
    expect(created.status).toBe(201);
    const id = created.body.session_id;
    expect(id).toMatch(/\S/);
    expect(created.body).toMatchObject({ busy: false, calls: 0 });
    try {
      const list = await api<{ sessions: { session_id: string }[] }>("/sessions");
      expect(list.status).toBe(200);
      expect(list.body.sessions.map((s) => s.session_id)).toContain(id);

      const one = await api<{ session_id: string }>(`/sessions/${id}`);
      expect(one.status).toBe(200);
      expect(one.body.session_id).toBe(id);

      // A file put over HTTP is seen by code in the session.
      const put = await api<{ path: string; size: number; created: boolean }>(`/sessions/${id}/files/content`, {
        method: "PUT",
        json: { path: "data/in.txt", content: "hello from http\n" },
      });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ size: 16, created: true });
      const read = await execute({ language: "python", session_id: id, code: "open('/workspace/data/in.txt').read().upper()" });
      expect(read.body).toMatchObject({ status: "ok", value: "HELLO FROM HTTP\n" });

      // A file written by code is read over HTTP.
      const wrote = await execute({ language: "bash", session_id: id, code: "printf 'made by bash' > out.txt" });
      expect(wrote.body.status).toBe("ok");
      const got = await api<{ content: string; encoding: string; size: number }>(`/sessions/${id}/files/content?path=out.txt`, { headers: { accept: "application/json" } });
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({ content: "made by bash", encoding: "utf8", size: 12 });

      // Binary survives a base64 round trip, and code sees the same bytes.
      const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      const putBin = await api(`/sessions/${id}/files/content`, { method: "PUT", json: { path: "bin/all.bin", content: bytes.toString("base64"), encoding: "base64" } });
      expect(putBin.status).toBe(200);
      const getBin = await api<{ content: string; encoding: string; size: number }>(`/sessions/${id}/files/content?path=bin/all.bin&encoding=base64`);
      expect(getBin.status).toBe(200);
      expect(getBin.body.encoding).toBe("base64");
      expect(Buffer.from(getBin.body.content, "base64").equals(bytes)).toBe(true);
      const sum = await execute({ language: "python", session_id: id, code: "d = open('bin/all.bin','rb').read()\n[len(d), sum(d)]" });
      expect(sum.body.value).toEqual([256, 255 * 128]);

      const listing = await api<{ path: string; entries: { name: string; type: string; size: number }[] }>(`/sessions/${id}/files`);
      expect(listing.status).toBe(200);
      expect(listing.body.path).toBe("/workspace");
      expect(listing.body.entries).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: "out.txt", type: "file", size: 12 }),
          expect.objectContaining({ name: "data", type: "directory" }),
          expect.objectContaining({ name: "bin", type: "directory" }),
        ]),
      );
      const sub = await api<{ entries: { name: string }[] }>(`/sessions/${id}/files?path=data`);
      expect(sub.body.entries.map((e) => e.name)).toEqual(["in.txt"]);
    } finally {
      const stopped = await api(`/sessions/${id}`, { method: "DELETE" });
      expect(stopped.status).toBe(200);
      expect(stopped.body).toEqual({ session_id: id, stopped: true });
    }
    expectError(await api(`/sessions/${id}`), 410, "SESSION_EXPIRED");
    const list = await api<{ sessions: { session_id: string }[] }>("/sessions");
    expect(list.body.sessions.map((s) => s.session_id)).not.toContain(id);
    // Reading a file of an ended session says it ended, and starts no new, empty one.
    const gone = expectError(await api(`/sessions/${id}/files/content?path=out.txt`), 410, "SESSION_EXPIRED");
    expect(gone.message).toMatch(/has ended \(stopped\)/);
    expectError(await api(`/sessions/${id}/files`), 410, "SESSION_EXPIRED");
    expectError(await api(`/sessions/${id}`), 410, "SESSION_EXPIRED");
  });

  it("creates a session with a chosen id", async () => {
    const created = await api<{ session_id: string }>("/sessions", { json: { session_id: "chosen-id" } });
    expect(created.status).toBe(201);
    expect(created.body.session_id).toBe("chosen-id");
    expect((await api("/sessions/chosen-id", { method: "DELETE" })).status).toBe(200);
  });

  it("refuses paths that leave the workspace with PATH_INVALID, and missing files with FILE_NOT_FOUND", async () => {
    const id = (await api<{ session_id: string }>("/sessions", { json: {} })).body.session_id;
    try {
      for (const path of ["../etc/passwd", "/etc/passwd", "a/../../x"]) {
        const err = expectError(await api(`/sessions/${id}/files/content?path=${encodeURIComponent(path)}`), 400, "PATH_INVALID");
        expect(err.message).toContain(path);
        expectError(await api(`/sessions/${id}/files/content`, { method: "PUT", json: { path, content: "x" } }), 400, "PATH_INVALID");
      }
      expectError(await api(`/sessions/${id}/files?path=..`), 400, "PATH_INVALID");
      // NUL byte sent as the JSON escape \u0000.
      const nul = await api(`/sessions/${id}/files/content`, { method: "PUT", raw: '{"path":"a\\u0000b.txt","content":"x"}' });
      expect(expectError(nul, 400, "PATH_INVALID").message).toMatch(/NUL/);
      expectError(await api(`/sessions/${id}/files/content?path=${encodeURIComponent("a\0b")}`), 400, "PATH_INVALID");

      const missing = expectError(await api(`/sessions/${id}/files/content?path=nope.txt`), 404, "FILE_NOT_FOUND");
      expect(missing.message).toContain("nope.txt");
      expectError(await api(`/sessions/${id}/files/content`), 400, "INVALID_INPUT");
    } finally {
      await api(`/sessions/${id}`, { method: "DELETE" });
    }
  });

  it("answers 404 SESSION_NOT_FOUND for a session that never existed, reads start none, and writes start it", async () => {
    expectError(await api("/sessions/no-such-session"), 404, "SESSION_NOT_FOUND");
    expectError(await api("/sessions/no-such-session", { method: "DELETE" }), 404, "SESSION_NOT_FOUND");
    expectError(await api("/sessions/new-by-read/files/content?path=a.txt"), 404, "SESSION_NOT_FOUND");
    expectError(await api("/sessions/new-by-read/files/content?path=a.txt&encoding=utf8"), 404, "SESSION_NOT_FOUND");
    expectError(await api("/sessions/new-by-read/files"), 404, "SESSION_NOT_FOUND");
    expectError(await api("/sessions/new-by-read"), 404, "SESSION_NOT_FOUND");
    const put = await api("/sessions/new-by-put/files/content", { method: "PUT", json: { path: "a.txt", content: "x" } });
    expect(put.status).toBe(200);
    const listed = await api<{ entries: { name: string }[] }>("/sessions/new-by-put/files");
    expect(listed.body.entries.map((e) => e.name)).toEqual(["a.txt"]);
    expect((await api("/sessions/new-by-put", { method: "DELETE" })).status).toBe(200);
  });
});

describe("bad input gets a clear 4xx and the server keeps serving", () => {
  it("malformed JSON is 400 MALFORMED_REQUEST", async () => {
    const err = expectError(await api("/execute", { raw: '{"language": "python", "code": ' }), 400, "MALFORMED_REQUEST");
    expect(err.message).toMatch(/not valid JSON/);
  });

  it("an empty body is 400 MALFORMED_REQUEST", async () => {
    expectError(await api("/execute", { raw: "" }), 400, "MALFORMED_REQUEST");
    const noBody = await fetch(`${rest.server.url}/execute`, { method: "POST" });
    expect(noBody.status).toBe(400);
    expect(((await noBody.json()) as ErrorBody).error.code).toBe("MALFORMED_REQUEST");
  });

  it("a JSON array or scalar instead of an object is 400 INVALID_INPUT", async () => {
    for (const raw of ['[{"language":"python","code":"1"}]', "42", '"code"', "null"]) {
      const err = expectError(await api("/execute", { raw }), 400, "INVALID_INPUT");
      expect(err.message, raw).toMatch(/JSON object/);
    }
  });

  it("wrong types are 400 INVALID_INPUT naming the field", async () => {
    const lang = expectError(await execute({ language: 5, code: "1" }), 400, "INVALID_INPUT");
    expect(lang.message).toContain("language");
    expect(lang.data?.field).toBe("language");
    const timeout = expectError(await execute({ language: "python", code: "1", timeout: "x" }), 400, "INVALID_INPUT");
    expect(timeout.message).toContain("timeout");
    expect(timeout.data?.field).toBe("timeout");
    const negative = expectError(await execute({ language: "python", code: "1", timeout: -1 }), 400, "INVALID_INPUT");
    expect(negative.message).toContain("timeout");
    expectError(await execute({ language: "python" }), 400, "INVALID_INPUT");
  });

  it("an unknown field is 400 INVALID_INPUT naming it", async () => {
    const err = expectError(await execute({ language: "python", code: "1", colour: "blue" }), 400, "INVALID_INPUT");
    expect(err.message).toContain("colour");
  });

  it("an unknown language is 400 UNKNOWN_LANGUAGE listing the known ones", async () => {
    const err = expectError(await execute({ language: "cobol", code: "DISPLAY 'HI'" }), 400, "UNKNOWN_LANGUAGE");
    expect(err.message).toContain("cobol");
    expect(err.message).toContain("python");
  });

  it("empty code is 400 CODE_EMPTY", async () => {
    expectError(await execute({ language: "python", code: "" }), 400, "CODE_EMPTY");
    expectError(await execute({ language: "bash", code: "  \n\t" }), 400, "CODE_EMPTY");
  });

  it("code above the configured maximum is 413 CODE_TOO_LARGE", async () => {
    const err = expectError(await execute({ language: "python", code: `x = '${"a".repeat(MAX_CODE_BYTES)}'` }), 413, "CODE_TOO_LARGE");
    expect(err.message).toContain(String(MAX_CODE_BYTES));
  });

  it("a body above server.maxBodyBytes is 413 BODY_TOO_LARGE", async () => {
    const err = expectError(await execute({ language: "python", code: `# ${"a".repeat(MAX_BODY_BYTES)}` }), 413, "BODY_TOO_LARGE");
    expect(err.message).toContain(String(MAX_BODY_BYTES));
    const put = await api("/sessions/whatever/files/content", { method: "PUT", json: { path: "big.txt", content: "b".repeat(MAX_BODY_BYTES * 2) } });
    expectError(put, 413, "BODY_TOO_LARGE");
  });

  it("a body refused unread closes its connection and says so, so a keep-alive client's next request goes on a new one", async () => {
    // fetch keeps its connections alive: several refusals in a row, each followed at once by a request that must work.
    for (let round = 0; round < 5; round++) {
      const body = JSON.stringify({ language: "python", code: `# ${"a".repeat(MAX_BODY_BYTES * 2)}` });
      const refused = await fetch(`${rest.server.url}/execute`, { method: "POST", headers: { "content-type": "application/json" }, body });
      expect(refused.status).toBe(413);
      expect(refused.headers.get("connection")).toBe("close");
      await refused.arrayBuffer();
      const next = await fetch(`${rest.server.url}/execute`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ language: "bash", code: `echo ${round}` }) });
      expect(next.status).toBe(200);
      expect(((await next.json()) as { stdout: string }).stdout).toBe(`${round}\n`);
    }
  });

  it("a chunked body (no Content-Length) above server.maxBodyBytes is 413 BODY_TOO_LARGE too", async () => {
    const chunks = [`{"language":"python","code":"#`, ..."a".repeat(MAX_BODY_BYTES + 1024).match(/.{1,4096}/g)!, `"}`];
    const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(`${rest.server.url}/execute`, { method: "POST", headers: { "content-type": "application/json", "transfer-encoding": "chunked" } }, (r) => {
        let text = "";
        r.on("data", (d: Buffer) => (text += d.toString()));
        r.on("end", () => resolve({ status: r.statusCode ?? 0, text }));
      });
      req.on("error", reject);
      for (const chunk of chunks) req.write(chunk);
      req.end();
    });
    expect(res.status).toBe(413);
    expect((JSON.parse(res.text) as ErrorBody).error.code).toBe("BODY_TOO_LARGE");
  });

  it("a session id that is not a plain name is 400 INVALID_INPUT", async () => {
    for (const session_id of ["../escape", ".hidden", "a/b", "x".repeat(129)]) {
      const created = await api("/sessions", { json: { session_id } });
      expect(created.status, session_id).toBe(400);
      expect((created.body as ErrorBody).error.code).toBe("INVALID_INPUT");
      expectError(await execute({ language: "python", code: "1", session_id }), 400, "INVALID_INPUT");
    }
  });

  it("a timeout above the admin maximum is 400 LIMIT_EXCEEDED", async () => {
    const err = expectError(await execute({ language: "python", code: "1", timeout: 1000 }), 400, "LIMIT_EXCEEDED");
    expect(err.message).toContain("20");
  });

  it("an unknown route is 404 NOT_FOUND", async () => {
    const err = expectError(await api("/no/such/route"), 404, "NOT_FOUND");
    expect(err.message).toContain("/no/such/route");
    expectError(await api("/execute"), 404, "NOT_FOUND");
  });

  it("an unknown tool on POST /mcp/execute is 404 with a JSON-RPC error", async () => {
    const { status, body } = await api<JsonRpcReply>("/mcp/execute", {
      json: { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "no_such_tool", arguments: {} } },
    });
    expect(status).toBe(404);
    expect(body).toMatchObject({ jsonrpc: "2.0", id: 3, error: { code: -32602, message: expect.stringContaining("no_such_tool"), data: { code: "UNKNOWN_TOOL" } } });
    expect(body.result).toBeUndefined();
  });

  it("a request that is not JSON-RPC on POST /mcp/execute is 400 with a JSON-RPC error", async () => {
    const { status, body } = await api<JsonRpcReply>("/mcp/execute", { json: { id: 1, method: "tools/call" } });
    expect(status).toBe(400);
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32602 } });
  });

  it("malformed JSON on POST /mcp/execute is a JSON-RPC parse error (-32700)", async () => {
    const malformed = await api<JsonRpcReply>("/mcp/execute", { raw: "{nope" });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
  });

  it("still runs code after all of that", async () => {
    const { status, body } = await execute({ language: "python", code: "'still here'" });
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "ok", value: "still here" });
  });
});

describe("MCP conveniences", () => {
  it("GET /mcp/tools lists every tool with input and output schemas", async () => {
    const { status, body } = await api<{ tools: { name: string; description: string; inputSchema: { type: string; required?: string[] }; outputSchema: { type: string } }[] }>("/mcp/tools");
    expect(status).toBe(200);
    expect(body.tools.map((t) => t.name)).toEqual(["execute_code", "execute_command", "search_tools", "list_servers", "get_job", "stop_job", "analyze_code", "get_sessions", "stop_session", "fork_session", "file_read", "file_write", "file_list", "get_volume_path"]);
    for (const tool of body.tools) {
      expect(tool.inputSchema.type, tool.name).toBe("object");
      expect(tool.outputSchema.type, tool.name).toBe("object");
      expect(tool.description.length, tool.name).toBeGreaterThan(20);
    }
    expect(body.tools[0]!.inputSchema.required).toEqual(expect.arrayContaining(["code", "language"]));
  });

  it("POST /mcp/execute calls a tool with one JSON-RPC request", async () => {
    const { status, body } = await api<JsonRpcReply>("/mcp/execute", {
      json: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "execute_command", arguments: { command: "echo a b | wc -w" } } },
    });
    expect(status).toBe(200);
    expect(body.error).toBeUndefined();
    expect(body).toMatchObject({ jsonrpc: "2.0", id: 7, result: { structuredContent: { status: "ok", stdout: "2\n" }, content: [{ type: "text" }] } });
    expect(body.result?.isError).toBeUndefined();
  });

  it("POST /mcp/execute reports a failed run as a result with isError", async () => {
    const { status, body } = await api<JsonRpcReply>("/mcp/execute", {
      json: { jsonrpc: "2.0", id: "s", method: "execute_code", params: { language: "python", code: "1/0" } },
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: "s", result: { isError: true, structuredContent: { status: "error", error: { type: "ZeroDivisionError" } } } });
  });

  it("GET /mcp/protocol-info says how to connect", async () => {
    const { status, body } = await api("/mcp/protocol-info");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      endpoint: "/mcp",
      server: { name: "sandgate", version: "test" },
      transports: { streamable_http: "/mcp" },
      protocol_versions: expect.arrayContaining(["2025-06-18"]),
      tools: expect.arrayContaining(["execute_code", "file_read"]),
      authentication: "none",
    });
  });
});
