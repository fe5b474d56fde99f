// `sandgate stdio`: MCP over stdin/stdout for desktop clients. stdout carries only protocol
// messages; every log line goes to stderr. Ends when the client closes stdin.

import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ClientLimiter } from "./client-limiter.js";
import type { ServerContext } from "./context.js";
import { createMcpServer } from "./mcp-server.js";

/** Serves one MCP client on stdio; resolves when the client goes away. */
export async function serveStdio(ctx: ServerContext): Promise<void> {
  const server = createMcpServer(ctx, { owner: "stdio", limiter: new ClientLimiter(ctx.config.server.maxConcurrentPerClient) });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
    process.stdin.once("close", () => resolve());
  });
  await server.connect(transport);
  ctx.log.info({ version: ctx.version, toolProfile: ctx.config.server.toolProfile }, "serving MCP over stdio");
  await closed;
  await server.close().catch(() => undefined);
}
