// `sandgate stdio` spawned as a child process and driven by the official SDK client: stdout
// carries nothing but protocol messages, and closing the client leaves no process behind.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { descendantPids, waitFor } from "../helpers.js";
import { connectStdio } from "../fixtures/cli.js";

let dir: string;
let client: Client;
let transport: StdioClientTransport;
const transportErrors: Error[] = [];
let stderr = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-stdio-"));
  ({ client, transport } = await connectStdio(
    { SANDBOX_DIR: dir, SANDGATE_POOL: "python=1,javascript=0,bash=0", SANDGATE_LOG_LEVEL: "info" },
    { name: "stdio-test", onError: (error) => transportErrors.push(error), onStderr: (text) => (stderr += text) },
  ));
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

describe("sandgate stdio", () => {
  it("serves the tools over stdin/stdout", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("execute_code");
    const py = (await client.callTool({ name: "execute_code", arguments: { code: "print('hello from stdio')\n2 ** 10", language: "python" } })) as CallToolResult;
    expect(py.structuredContent).toMatchObject({ status: "ok", stdout: "hello from stdio\n", value: 1024 });
    const sh = (await client.callTool({ name: "execute_command", arguments: { command: "echo one two | wc -w" } })) as CallToolResult;
    expect(sh.structuredContent).toMatchObject({ status: "ok", stdout: "2\n" });
  });

  it("keeps a session across calls and streams output as log messages", async () => {
    const logs: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      if (n.params.logger === "stdout") logs.push(String(n.params.data));
    });
    await client.callTool({ name: "execute_code", arguments: { code: "let n = 41", language: "javascript", session_id: "desk" } });
    const next = (await client.callTool({ name: "execute_code", arguments: { code: "console.log('n is', n); n + 1", language: "javascript", session_id: "desk" } })) as CallToolResult;
    expect(next.structuredContent).toMatchObject({ status: "ok", value: 42 });
    expect(logs.join("")).toContain("n is 41");
  });

  it("writes nothing but protocol messages to stdout, even while logging at info", () => {
    // A stray line on stdout would reach the client's parser and surface as an error here.
    expect(transportErrors).toEqual([]);
    expect(stderr).toContain('"level":30');
  });

  it("exits and leaves no process behind when the client closes", async () => {
    const pid = transport.pid;
    expect(pid).not.toBeNull();
    expect(descendantPids().length).toBeGreaterThan(1);
    await client.close();
    expect(await waitFor(() => descendantPids().length === 0, 10_000)).toBe(true);
  });
});
