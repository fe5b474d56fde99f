// Upstream servers that send too much: an endless SSE event, a 200 MB JSON body, an endless stdio
// line. The call fails naming the server and the cap, memory stays bounded, the rest keeps working.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandgateError } from "../../src/errors/index.js";
import { UpstreamManager } from "../../src/features/codemode/upstream/index.js";
import { sampleRssGrowth } from "../fixtures/samplers.js";
import { recordingLogger, rejection, text, waitFor } from "../fixtures/upstream/helpers.js";
import { startFloodServer, type FloodServer } from "../fixtures/upstream/flood-server.js";

/** Growth of this process's RSS that a bounded reader stays far below (the floods are 200 MB or endless). */
const RSS_BOUND = 160 * 1024 * 1024;

// A stdio MCP server that answers the handshake and then writes one line that never ends.
const STDIO_FLOOD = `
const chunk = "x".repeat(65536);
let buffer = "";
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
process.stdin.on("data", (d) => {
  buffer += d;
  let i;
  while ((i = buffer.indexOf("\\n")) >= 0) {
    const m = JSON.parse(buffer.slice(0, i));
    buffer = buffer.slice(i + 1);
    if (m.method === "initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "flood", version: "1" } } });
    else if (m.method === "tools/list") send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "endless_line", inputSchema: { type: "object" } }] } });
    else if (m.method === "tools/call") {
      process.stdout.write('{"jsonrpc":"2.0","id":' + m.id + ',"result":{"content":[{"type":"text","text":"');
      const pump = () => { while (process.stdout.write(chunk)) {} process.stdout.once("drain", pump); };
      pump();
    }
  }
});
`;

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

describe("upstream servers that flood their responses", () => {
  let flood: FloodServer;
  let neighbour: FloodServer;
  let manager: UpstreamManager;
  const logged = recordingLogger();

  beforeAll(async () => {
    flood = await startFloodServer();
    neighbour = await startFloodServer();
    manager = new UpstreamManager({
      connectTimeoutMs: 15_000,
      defaultCallTimeoutMs: 120_000,
      maxRestarts: 20,
      backoffBaseMs: 50,
      log: logged.log,
      servers: {
        flood: { url: flood.url, type: "http", headers: {} },
        legacy: { url: flood.sseUrl, type: "sse", headers: {} },
        neighbour: { url: neighbour.url, headers: {} },
        stdio: { command: process.execPath, args: ["-e", STDIO_FLOOD], env: {} },
      },
    });
    await manager.start();
  });

  afterAll(async () => {
    await manager.close();
    await flood.close();
    await neighbour.close();
  });

  const ready = (server: string): Promise<boolean> => waitFor(() => manager.serverStatus(server)?.state === "ready", 20_000);

  it("connects to every hostile server: their handshakes are well-formed", () => {
    for (const name of ["flood", "legacy", "neighbour", "stdio"]) expect(manager.serverStatus(name)?.state, name).toBe("ready");
  });

  for (const [server, tool, what] of [
    ["flood", "endless_event", "sent an SSE event larger than the 10 MiB limit"],
    ["flood", "huge_json", "sent a response body larger than the 10 MiB limit"],
    ["legacy", "endless_event", "sent an SSE event larger than the 10 MiB limit"],
    ["legacy", "huge_json", "sent an SSE event larger than the 10 MiB limit"],
    ["stdio", "endless_line", "sent a message larger than the 10 MiB limit"],
  ] as const) {
    it(`a ${server} server whose \`${tool}\` floods fails that call naming the server and the cap, with bounded memory`, async () => {
      expect(await ready(server)).toBe(true);
      gc();
      const rss = sampleRssGrowth();
      let growth: number;
      try {
        const error = await rejection(manager.callTool(server, tool, {}));
        expect(error.code).toBe("UPSTREAM_ERROR");
        expect(error.message).toContain(`upstream server \`${server}\` ${what}`);
        expect(error.message).toContain(`the call to \`${server}.${tool}\` failed`);
      } finally {
        growth = rss.stop();
      }
      expect(growth).toBeLessThan(RSS_BOUND);
      // The connection was reset: the server comes back and answers again.
      expect(await ready(server)).toBe(true);
      if (server !== "stdio") expect(text(await manager.callTool(server, "hello", {}))).toBe("hello");
    });
  }

  it("keeps other servers working while one floods", async () => {
    const flooding = manager.callTool("flood", "endless_event", {}).catch((e: unknown) => e);
    expect(text(await manager.callTool("neighbour", "hello", {}))).toBe("hello");
    expect(await flooding).toBeInstanceOf(SandgateError);
    expect(manager.serverStatus("neighbour")?.state).toBe("ready");
    expect(logged.lines.join("\n")).toContain("upstream server broke a size limit");
  });
});
