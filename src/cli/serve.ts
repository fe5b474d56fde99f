// `sandgate serve` and `sandgate stdio`: build the engine, serve until a signal (or, for
// stdio, until the client closes stdin), then stop every sandbox before exiting.

import type { SandgateConfig } from "../config/index.js";
import { Engine } from "../execution/index.js";
import { serveStdio, startHttpServer, assertSafeToServe, type ServerContext } from "../server/index.js";
import { createLogger } from "../util/logger.js";

function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const handler = (signal: NodeJS.Signals): void => {
      process.off("SIGINT", handler);
      process.off("SIGTERM", handler);
      resolve(signal);
    };
    process.on("SIGINT", handler);
    process.on("SIGTERM", handler);
  });
}

function context(config: SandgateConfig, version: string): ServerContext {
  const log = createLogger(config.logLevel);
  return { engine: Engine.create(config, { log }), config, log, version, startedAt: Date.now() };
}

export async function runServe(config: SandgateConfig, version: string): Promise<number> {
  assertSafeToServe(config.server);
  const ctx = context(config, version);
  try {
    const server = await startHttpServer(ctx);
    ctx.log.info({ url: server.url }, "listening");
    process.stdout.write(`sandgate ${version} listening on ${server.url}\n  MCP (Streamable HTTP): ${server.url}/mcp\n  REST API docs: ${server.url}/docs\n`);
    const signal = await waitForSignal();
    ctx.log.info({ signal }, "stopping");
    await server.close();
  } finally {
    await ctx.engine.close();
  }
  return 0;
}

export async function runStdio(config: SandgateConfig, version: string): Promise<number> {
  // stdout carries MCP messages only: whatever a dependency prints through console goes to stderr.
  console.log = console.info = console.debug = console.error;
  const ctx = context(config, version);
  try {
    await Promise.race([serveStdio(ctx), waitForSignal()]);
  } finally {
    await ctx.engine.close();
  }
  return 0;
}
