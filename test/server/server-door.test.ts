// At the server's door: slow or stalled request bodies and headers are cut off within seconds
// (408, socket closed), and errors reach clients without host paths, stacks or raw messages.

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { startHttpServer, type RunningServer } from "../../src/server/index.js";
import type { Logger } from "../../src/util/logger.js";
import { createTestApp, createTestEngine, waitFor, type TestEngine } from "../helpers.js";
import { connectMcp } from "../fixtures/mcp-client.js";
import { jsonApi, parseSse, serverContext, startTestServer } from "../server-helpers.js";

interface RawExchange {
  text: string;
  closed: Promise<void>;
  socket: Socket;
}

/** Opens a TCP connection to `url` and writes `head`; collects whatever the server answers until it closes. */
function openRaw(url: string, head: string): RawExchange {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  const exchange: RawExchange = { text: "", socket, closed: new Promise((resolve) => socket.once("close", () => resolve())) };
  socket.on("data", (chunk: Buffer) => {
    exchange.text += chunk.toString("utf8");
  });
  socket.on("error", () => undefined);
  socket.write(head);
  return exchange;
}

const POST_HEAD = (url: string, length: number): string =>
  `POST /execute HTTP/1.1\r\nHost: ${new URL(url).host}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

/** A logger that keeps what was logged at error level. */
function captureLog(): { log: Logger; errors: Array<Record<string, unknown>> } {
  const errors: Array<Record<string, unknown>> = [];
  const noop = (): void => undefined;
  const log = { debug: noop, info: noop, warn: noop, error: (detail: Record<string, unknown>) => void errors.push(detail) } as unknown as Logger;
  return { log, errors };
}

let fx: TestEngine | undefined;
let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  await fx?.close();
  server = undefined;
  fx = undefined;
});

describe("slow request bodies and headers", () => {
  it("a body trickled at 1 byte per second gets 408 REQUEST_TIMEOUT and the connection is closed", async () => {
    fx = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
    server = await startTestServer(fx.engine, fx.config, { bodyTimeoutS: 2 });
    const body = JSON.stringify({ language: "bash", code: "echo never" });
    const raw = openRaw(server.url, POST_HEAD(server.url, body.length));
    let sent = 0;
    const trickle = setInterval(() => {
      if (!raw.socket.destroyed && sent < body.length) raw.socket.write(body[sent++]!);
    }, 1000);
    try {
      await raw.closed;
    } finally {
      clearInterval(trickle);
    }
    expect(raw.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(raw.text.toLowerCase()).toContain("connection: close");
    const json = JSON.parse(raw.text.slice(raw.text.indexOf("\r\n\r\n") + 4)) as { error: { code: string; message: string } };
    expect(json.error.code).toBe("REQUEST_TIMEOUT");
    expect(json.error.message).toContain("2 s");
    expect(sent).toBeLessThan(body.length);
  }, 30_000);

  it("200 sockets that stall in their headers or their bodies are all closed by the server while a normal client is served", async () => {
    fx = createTestEngine({}, { python: 0, javascript: 0, bash: 1 });
    server = await startTestServer(fx.engine, fx.config, { bodyTimeoutS: 2 });
    const url = server.url;
    const host = new URL(url).host;
    const sockets: RawExchange[] = [];
    for (let i = 0; i < 100; i++) sockets.push(openRaw(url, `POST /execute HTTP/1.1\r\nHost: ${host}\r\nX-Slow: `));
    for (let i = 0; i < 100; i++) sockets.push(openRaw(url, `${POST_HEAD(url, 1000)}{"language":`));
    try {
      const api = jsonApi(() => url);
      const normal = await api<{ stdout: string }>("/execute", { json: { language: "bash", code: "echo served" } });
      expect(normal.status).toBe(200);
      expect(normal.body.stdout).toBe("served\n");
      let closed = 0;
      for (const s of sockets) void s.closed.then(() => closed++);
      expect(await waitFor(() => closed === sockets.length, 25_000)).toBe(true);
      // Stalled bodies are told why; stalled headers are dropped by Node's header deadline.
      expect(sockets.slice(100).every((s) => s.text.startsWith("HTTP/1.1 408 "))).toBe(true);
    } finally {
      for (const s of sockets) s.socket.destroy();
    }
  }, 60_000);
});

describe("deadlines apply to receiving requests only", () => {
  it("a call that runs longer than the body and request deadlines still gets its result", async () => {
    fx = createTestEngine({}, { python: 0, javascript: 0, bash: 1 });
    // The body and headers deadlines are then 1 s, checked every second; the run takes 3. (Node's request
    // deadline is a file transfer's hour, TRANSFER_TIMEOUT_MS, since uploads may stream long: no test waits it out.)
    server = await startTestServer(fx.engine, fx.config, { bodyTimeoutS: 1 });
    const reply = await jsonApi(() => server!.url)<{ stdout: string }>("/execute", { json: { language: "bash", code: "sleep 3; echo done" } });
    expect(reply.status).toBe(200);
    expect(reply.body.stdout).toBe("done\n");
  }, 60_000);
});

describe("no host details in errors", () => {
  it("an unexpected failure is INTERNAL with a reference and no host path or stack, over REST, JSON-RPC and MCP, and the log has the detail", async () => {
    fx = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
    const { log, errors } = captureLog();
    server = await startHttpServer({ ...serverContext(fx.engine, fx.config), log });
    const api = jsonApi(() => server!.url);
    // A host fault sandgate has no code for: the workspaces directory is now a plain file.
    const workspaces = fx.engine.runtime.workspacesDir;
    rmSync(workspaces, { recursive: true, force: true });
    writeFileSync(workspaces, "not a directory");
    const leaks = (text: string): void => {
      expect(text).not.toContain(fx!.dir);
      expect(text).not.toContain(process.cwd());
      expect(text).not.toMatch(/ENOTDIR|EEXIST|\n\s+at /);
    };

    const rest = await api<{ error: { code: string; message: string; data: { ref: string } } }>("/sessions", { json: {} });
    expect(rest.status).toBe(500);
    expect(rest.body.error.code).toBe("INTERNAL");
    expect(rest.body.error.message).toMatch(/reference [0-9a-f]{8}/);
    leaks(JSON.stringify(rest.body));
    expect(errors.some((e) => e.ref === rest.body.error.data.ref && String((e.err as Error).message).includes(workspaces))).toBe(true);

    const rpc = await api<{ error: { message: string } }>("/mcp/execute", {
      json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "execute_code", arguments: { language: "bash", code: "echo hi", session_id: "s1" } } },
    });
    expect(rpc.status).toBe(500);
    expect(rpc.body).toMatchObject({ error: { message: expect.stringMatching(/reference [0-9a-f]{8}/), data: { code: "INTERNAL" } } });
    leaks(JSON.stringify(rpc.body));

    const sse = await fetch(`${server.url}/execute?stream=1`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ language: "bash", code: "echo hi", session_id: "s2" }),
    });
    const sseText = await sse.text();
    leaks(sseText);
    const errorEvent = parseSse(sseText).find((e) => e.event === "error");
    expect(errorEvent, sseText).toBeDefined();
    expect(JSON.parse(errorEvent!.data)).toMatchObject({ error: { code: "INTERNAL", message: expect.stringMatching(/reference [0-9a-f]{8}/) } });

    const { client } = await connectMcp(server.url, { name: "door-test" });
    try {
      const reply = await client.callTool({ name: "execute_code", arguments: { language: "bash", code: "echo hi", session_id: "s3" } }).then(
        (r) => JSON.stringify(r),
        (e: unknown) => String((e as Error).message),
      );
      expect(reply).toMatch(/internal error \(reference [0-9a-f]{8}\)/);
      leaks(reply);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("a sandbox failure that names a volume's host directory shows the path the sandbox sees instead", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-test-"));
    const volume = mkdtempSync(join(tmpdir(), "sandgate-volume-"));
    chmodSync(volume, 0o755);
    const config = { ...loadConfig({ SANDBOX_DIR: dir }), volumes: [{ name: "data", hostPath: volume, readOnly: true }] };
    const app = createTestApp(config, { pool: { python: 0, javascript: 0, bash: 0 } });
    const running = await startTestServer(app.engine, config);
    try {
      // Gone after start-up: bubblewrap's complaint names the host directory.
      rmSync(volume, { recursive: true, force: true });
      const reply = await jsonApi(() => running.url)<{ error: { code: string; message: string } }>("/execute", { json: { language: "bash", code: "echo hi" } });
      expect(reply.body.error.code).toBe("SANDBOX_FAILED");
      expect(reply.body.error.message).toContain("/mnt/data");
      expect(reply.body.error.message).not.toContain(volume);
    } finally {
      await running.close();
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
