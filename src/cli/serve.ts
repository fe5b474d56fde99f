// `sandgate serve` and `sandgate stdio`: build the engine, serve until a signal (or, for
// stdio, until the client closes stdin), then stop every sandbox before exiting.

import type { SandgateConfig } from "../config/index.js";
import { createApp, type App, type AppOptions } from "../app/index.js";
import { serveStdio, startHttpServer, assertSafeToServe } from "../server/index.js";

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

/** The app of a server, started; upstream failures are logged, not fatal. */
async function startApp(config: SandgateConfig, version: string, options: AppOptions = {}): Promise<App> {
  const app = createApp(config, { version, ...options });
  await app.start();
  for (const server of app.codeMode.status()) {
    if (server.state === "failed") app.log.warn({ server: server.name, error: server.error }, "upstream MCP server unavailable");
    else app.log.info({ server: server.name, state: server.state, tools: server.toolCount }, "upstream MCP server");
  }
  return app;
}

/** "full" or "codemode (execute_code, search_tools)": which tools MCP lists. */
function toolProfileLine(config: SandgateConfig): string {
  return config.server.toolProfile === "full" ? "full" : "codemode (execute_code, search_tools; set SANDGATE_TOOLS=full for every tool)";
}

/** The most a stop may take after a signal: what is stuck then (a helper, an upstream) is left to die with the process. */
const STOP_DEADLINE_MS = 10_000;
/** Of that, what the engine, code mode and the analyzer get; the audit log is flushed in the rest. */
const CONTEXT_DEADLINE_MS = 7_000;

export async function runServe(config: SandgateConfig, version: string): Promise<number> {
  assertSafeToServe(config.server);
  const app = await startApp(config, version);
  let closed = false;
  try {
    const server = await startHttpServer(app);
    app.log.info({ url: server.url, toolProfile: config.server.toolProfile }, "listening");
    const upstream = app.codeMode
      .status()
      .map((s) => `${s.name} (${s.state === "ready" ? `${s.toolCount} tools` : s.state})`)
      .join(", ");
    process.stdout.write(
      `sandgate ${version} listening on ${server.url}\n  MCP (Streamable HTTP): ${server.url}/mcp (tools: ${toolProfileLine(config)})\n  REST API docs: ${server.url}/docs\n` +
        (upstream ? `  Upstream MCP servers: ${upstream}\n` : ""),
    );
    const signal = await waitForSignal();
    app.log.info({ signal }, "stopping");
    const started = Date.now();
    // A stop ends within STOP_DEADLINE_MS whatever is stuck; a second signal ends it at once.
    const force = setTimeout(() => process.exit(0), STOP_DEADLINE_MS);
    force.unref();
    const now = (): void => process.exit(0);
    process.once("SIGINT", now);
    process.once("SIGTERM", now);
    await server.close();
    const clean = await app.close({ deadlineMs: Math.max(1000, Math.min(CONTEXT_DEADLINE_MS, STOP_DEADLINE_MS - 1000 - (Date.now() - started))) });
    closed = true;
    clearTimeout(force);
    // Something left running (a helper that would not die) must not keep the process alive.
    if (!clean) process.exit(0);
  } finally {
    if (!closed) await app.close();
  }
  return 0;
}

export async function runStdio(config: SandgateConfig, version: string): Promise<number> {
  // stdout carries MCP messages only: whatever a dependency prints through console goes to stderr.
  console.log = console.info = console.debug = console.error;
  // Over stdio there is no /approvals to decide at: only the client itself (elicitation) can approve.
  const app = await startApp(config, version, { approvals: "client" });
  try {
    await Promise.race([serveStdio(app), waitForSignal()]);
  } finally {
    await app.close();
  }
  return 0;
}
