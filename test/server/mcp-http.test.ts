// The MCP server over Streamable HTTP, driven by the official SDK client against the real
// server on port 0 with real sandboxes: tools, sessions, files, errors, logs, cancellation.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { LoggingMessageNotificationSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createMcpServer, type RunningServer } from "../../src/server/index.js";
import { serverContext, startTestServer } from "../server-helpers.js";
import { createTestEngine, descendantPids, waitFor, type TestEngine } from "../helpers.js";
import { callTool as call, connectMcp, toolText as text } from "../fixtures/mcp-client.js";

let harness: TestEngine;
let server: RunningServer;
const clients: Client[] = [];

async function connect(): Promise<Client> {
  const { client } = await connectMcp(server.url);
  clients.push(client);
  return client;
}

beforeAll(async () => {
  harness = createTestEngine({}, { python: 1, javascript: 1, bash: 1 });
  server = await startTestServer(harness.engine, harness.config);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await server?.close();
  await harness?.close();
});

describe("MCP over Streamable HTTP", () => {
  it("lists every tool with a description, input schema and output schema", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual(["analyze_code", "execute_code", "execute_command", "file_list", "file_read", "file_write", "fork_session", "get_job", "get_sessions", "get_volume_path", "list_servers", "search_tools", "stop_job", "stop_session"]);
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type, tool.name).toBe("object");
    }
    const exec = tools.find((t) => t.name === "execute_code")!;
    expect(exec.inputSchema.required).toEqual(expect.arrayContaining(["code", "language"]));
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, logging: {}, resources: {}, prompts: {} });
  });

  it("runs code in every language and returns structured results", async () => {
    const client = await connect();
    const cases: Array<[string, string, string, unknown]> = [
      ["python", "import sys\nprint(sys.version_info[0])\n6*7", "3\n", 42],
      ["javascript", "console.log('js'); [1,2,3].map(x => x * 2)", "js\n", [2, 4, 6]],
      ["typescript", "const n: number = 5;\nconsole.log(`ts ${n}`);\nn * 2", "ts 5\n", 10],
      ["bash", "echo $((20 + 22))", "42\n", undefined],
    ];
    for (const [language, code, stdout, value] of cases) {
      const result = await call(client, "execute_code", { code, language });
      expect(result.isError, language).toBeFalsy();
      expect(result.structuredContent, language).toMatchObject({ status: "ok", exit_code: 0, stdout, session_id: null });
      if (value !== undefined) expect(result.structuredContent?.value, language).toEqual(value);
      expect(text(result), language).toContain(stdout.trim());
    }
    const command = await call(client, "execute_command", { command: "mkdir -p d && cd d && printf 'b\\na\\n' | sort | tr a-z A-Z > out && cat out && pwd" });
    expect(command.structuredContent).toMatchObject({ status: "ok", stdout: "A\nB\n/workspace/d\n" });
  });

  it("keeps state and files across calls of a session, and stops it", async () => {
    const client = await connect();
    const id = "mcp-session-1";
    await call(client, "execute_code", { code: "total = 40\nopen('notes.txt', 'w').write('kept')", language: "python", session_id: id });
    const again = await call(client, "execute_code", { code: "total + 2", language: "python", session_id: id });
    expect(again.structuredContent).toMatchObject({ status: "ok", value: 42, session_id: id });
    const shell = await call(client, "execute_command", { command: "cat notes.txt; ls", session_id: id, working_directory: "." });
    expect(shell.structuredContent?.stdout).toContain("kept");

    const written = await call(client, "file_write", { session_id: id, path: "data/in.csv", content: "a,b\n1,2\n" });
    expect(written.structuredContent).toMatchObject({ path: "/workspace/data/in.csv", size: 8, created: true });
    const read = await call(client, "execute_code", { code: "open('data/in.csv').read().splitlines()[1]", language: "python", session_id: id });
    expect(read.structuredContent?.value).toBe("1,2");
    const fileBack = await call(client, "file_read", { session_id: id, path: "/workspace/notes.txt" });
    expect(fileBack.structuredContent).toMatchObject({ content: "kept", encoding: "utf8", size: 4 });
    const listing = await call(client, "file_list", { session_id: id });
    const entries = (listing.structuredContent?.entries ?? []) as Array<{ name: string; type: string }>;
    expect(entries).toEqual(expect.arrayContaining([expect.objectContaining({ name: "data", type: "directory" }), expect.objectContaining({ name: "notes.txt", type: "file" })]));

    const sessions = await call(client, "get_sessions", {});
    expect((sessions.structuredContent?.sessions as Array<{ session_id: string }>).map((s) => s.session_id)).toContain(id);
    const stopped = await call(client, "stop_session", { session_id: id });
    expect(stopped.structuredContent).toEqual({ session_id: id, stopped: true });
    const gone = await call(client, "file_read", { session_id: id, path: "notes.txt" });
    // A read starts no session: it says the session ended; code starts a new, empty one and is told so.
    expect(gone.isError).toBe(true);
    expect(text(gone)).toMatch(/session mcp-session-1 has ended \(stopped\)/);
    const reborn = await call(client, "execute_code", { code: "'total' in globals()", language: "python", session_id: id });
    expect(reborn.structuredContent).toMatchObject({ status: "ok", value: false });
    expect(text(reborn)).toMatch(/had ended \(stopped\); a new, empty one was started/);
    await call(client, "stop_session", { session_id: id });
  });

  it("tells the agent when file_write started a new session because the earlier one of that id had ended", async () => {
    const client = await connect();
    const id = "mcp-write-reborn";
    await call(client, "file_write", { session_id: id, path: "a.txt", content: "one" });
    await call(client, "stop_session", { session_id: id });
    const written = await call(client, "file_write", { session_id: id, path: "b.txt", content: "two" });
    expect(text(written)).toBe(`Note: session ${id} had ended (stopped); a new, empty one was started with the same id.\nWrote 3 bytes to /workspace/b.txt.`);
    expect(written.structuredContent).toEqual({ path: "/workspace/b.txt", size: 3, created: true });
    // A write into a live session carries no note.
    expect(text(await call(client, "file_write", { session_id: id, path: "b.txt", content: "three" }))).toBe("Wrote 5 bytes to /workspace/b.txt.");
    await call(client, "stop_session", { session_id: id });
  });

  it("reports a failing program as an error result that says what happened and what to try", async () => {
    const client = await connect();
    const failing = await call(client, "execute_code", { code: "def f():\n    return 1 / 0\nf()", language: "python" });
    expect(failing.isError).toBe(true);
    expect(failing.structuredContent).toMatchObject({ status: "error", error: { type: "ZeroDivisionError" } });
    expect(text(failing)).toMatch(/line 2, in f[\s\S]*ZeroDivisionError: division by zero[\s\S]*Fix the error/);

    const slow = await call(client, "execute_code", { code: "while True: pass", language: "python", timeout: 1 });
    expect(slow.isError).toBe(true);
    expect(slow.structuredContent?.status).toBe("timeout");
    expect(text(slow)).toMatch(/larger timeout/);

    const missing = await call(client, "file_read", { session_id: "never-made", path: "x" });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/no session with id never-made/);
  });

  it("answers malformed calls with JSON-RPC errors and keeps serving", async () => {
    const client = await connect();
    const attempts: Array<[string, Record<string, unknown>, RegExp]> = [
      ["no_such_tool", {}, /unknown tool "no_such_tool"/],
      ["execute_code", { code: "1", language: 5 }, /language/],
      ["execute_code", { code: "1", language: "cobol" }, /unknown language "cobol"/],
      ["execute_code", { code: "1", language: "python", extra: true }, /unknown argument "extra"/],
      ["execute_code", { code: "   ", language: "python" }, /code is empty/],
      ["execute_code", { code: "1", language: "python", timeout: 10_000 }, /timeout/],
      ["file_read", { session_id: "s", path: "../../etc/passwd" }, /PATH_INVALID|\.\./],
    ];
    await call(client, "execute_code", { code: "1", language: "python", session_id: "s" }); // file_read needs a live session
    for (const [name, args, message] of attempts) {
      const error = await client.callTool({ name, arguments: args }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, name).toBeInstanceOf(McpError);
      expect((error as McpError).code, name).toBe(-32602);
      expect((error as McpError).message, name).toMatch(message);
    }
    const ok = await call(client, "execute_code", { code: "'still here'", language: "python" });
    expect(ok.structuredContent?.value).toBe("still here");
  });

  it("streams output as logging messages and progress while code runs", async () => {
    const client = await connect();
    await client.setLoggingLevel("info");
    const logs: Array<{ at: number; logger?: string; data: unknown }> = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push({ at: Date.now(), data: n.params.data, ...(n.params.logger ? { logger: n.params.logger } : {}) });
    });
    const progress: string[] = [];
    const code = "import sys, time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(0.3)\nprint('oops', file=sys.stderr)";
    const result = (await client.callTool({ name: "execute_code", arguments: { code, language: "python" } }, undefined, {
      onprogress: (p) => progress.push(p.message ?? ""),
    })) as CallToolResult;
    const finished = Date.now();
    expect(result.structuredContent?.stdout).toBe("tick 0\ntick 1\ntick 2\n");
    const stdoutLogs = logs.filter((l) => l.logger === "stdout");
    expect(stdoutLogs.map((l) => l.data).join("")).toBe("tick 0\ntick 1\ntick 2\n");
    // The first line arrived while the code was still sleeping, not with the result.
    expect(stdoutLogs[0]!.at).toBeLessThan(finished - 300);
    expect(logs.some((l) => l.logger === "stderr" && String(l.data).includes("oops"))).toBe(true);
    expect(progress.join("")).toContain("tick 2");

    logs.length = 0;
    await client.setLoggingLevel("error");
    await call(client, "execute_code", { code: "print('quiet')", language: "python" });
    expect(logs).toEqual([]);
  });

  it("keeps reporting progress during a long quiet run, so clients do not time out", async () => {
    const ctx = serverContext(harness.engine, harness.config);
    const server = createMcpServer(ctx, { owner: "in-memory", heartbeatMs: 150 });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "in-memory", version: "1.0.0" });
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    try {
      const progress: string[] = [];
      const result = (await client.callTool({ name: "execute_code", arguments: { code: "import time\ntime.sleep(1)\n'done'", language: "python" } }, undefined, {
        onprogress: (p) => progress.push(p.message ?? ""),
        timeout: 700,
        resetTimeoutOnProgress: true,
      })) as CallToolResult;
      expect(result.structuredContent?.value).toBe("done");
      expect(progress.filter((m) => /still running after \d+ s/.test(m)).length).toBeGreaterThanOrEqual(3);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("interrupts the running code when the client cancels the call, and the session keeps its state", async () => {
    const client = await connect();
    const id = "cancel-me";
    await call(client, "execute_code", { code: "state = 'alive'", language: "python", session_id: id });
    const controller = new AbortController();
    const started = Date.now();
    const pending = client.callTool({ name: "execute_code", arguments: { code: "import time\ntime.sleep(30)", language: "python", session_id: id } }, undefined, {
      signal: controller.signal,
    });
    setTimeout(() => controller.abort("user pressed stop"), 700);
    await expect(pending).rejects.toThrow();
    // The sleep was interrupted: the session's next call runs at once, in the same interpreter.
    const next = await call(client, "execute_code", { code: "'state' in globals()", language: "python", session_id: id });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(next.structuredContent?.value).toBe(true);
    expect(next.structuredContent?.state_reset).toBeUndefined();
  });

  it("stops the code and leaks nothing when an HTTP client disconnects mid-run", async () => {
    const baseline = descendantPids().length;
    const post = (body: unknown, sessionId?: string, signal?: AbortSignal): Promise<Response> =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(sessionId ? { "mcp-session-id": sessionId } : {}) },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
    const init = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
    const sessionId = init.headers.get("mcp-session-id")!;
    await init.text();
    await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, sessionId)).text();
    const controller = new AbortController();
    const running = post(
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "execute_code", arguments: { code: "import time\ntime.sleep(60)", language: "python", session_id: "dropped" } } },
      sessionId,
      controller.signal,
    ).then((r) => r.text());
    // The session belongs to the anonymous MCP session that started it; look it up among all owners'.
    const dropped = () => harness.engine.sessions.listAll().find((s) => s.id === "dropped");
    expect(await waitFor(() => dropped()?.runners.includes("python") === true, 10_000)).toBe(true);
    controller.abort();
    await running.catch(() => undefined);
    // The call ends long before its 60 s sleep (interrupted: the session keeps its interpreter).
    expect(await waitFor(() => dropped()?.busy === false, 10_000)).toBe(true);
    expect(dropped()?.runners).toEqual(["python"]);
    // Once the session ends nothing of it is left.
    await harness.engine.sessions.stop("dropped", dropped()!.owner);
    expect(await waitFor(() => descendantPids().length <= baseline, 10_000)).toBe(true);
    const client = await connect();
    const ok = await call(client, "execute_code", { code: "1 + 1", language: "python" });
    expect(ok.structuredContent?.value).toBe(2);
  });

  it("at the MCP session cap closes the least recently used idle session instead of refusing a new client", async () => {
    const small = await startTestServer(harness.engine, harness.config, { maxMcpSessions: 2 });
    const open = () => connectMcp(small.url, { name: "cap-test" });
    try {
      const first = await open();
      const second = await open();
      await second.client.listTools();
      const third = await open();
      expect((await third.client.listTools()).tools.length).toBeGreaterThan(0);
      // The first was the least recently used: it is gone; the second still works.
      await expect(first.client.listTools()).rejects.toThrow(/404|not found/i);
      expect((await second.client.listTools()).tools.length).toBeGreaterThan(0);
      await Promise.all([first, second, third].map((c) => c.client.close()));
    } finally {
      await small.close();
    }
  });

  it("exposes the security policy resource and the usage prompt", async () => {
    const client = await connect();
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain("sandgate://security-policy");
    const read = await client.readResource({ uri: "sandgate://security-policy" });
    const policy = JSON.parse((read.contents[0] as { text: string }).text) as { limits: { max_execution_time_s: number }; isolation: { network: string } };
    expect(policy.limits.max_execution_time_s).toBe(harness.config.limits.maxExecutionTimeS);
    expect(policy.isolation.network).toMatch(/none/);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toContain("use_sandgate");
    const prompt = await client.getPrompt({ name: "use_sandgate", arguments: { task: "sum a CSV column" } });
    const body = (prompt.messages[0]!.content as { text: string }).text;
    expect(body).toMatch(/session_id/);
    expect(body).toMatch(/Task: sum a CSV column/);
  });
});
