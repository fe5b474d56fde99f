// `sandgate serve` and `sandgate stdio`: build the engine, serve until a signal (or, for
// stdio, until the client closes stdin), then stop every sandbox before exiting.

import type { SandgateConfig } from "../config/index.js";
import { CodeMode } from "../codemode/index.js";
import { Engine } from "../execution/index.js";
import { ApprovalQueue, Governance, GovernanceEvents } from "../governance/index.js";
import { observeServer, serveStdio, startHttpServer, assertSafeToServe, type ServerContext } from "../server/index.js";
import { openAuditLog } from "../store/index.js";
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

/** The engine and the upstream servers, started together; upstream failures are logged, not fatal. */
async function context(config: SandgateConfig, version: string, approvalsApi = true): Promise<ServerContext> {
  const log = createLogger(config.logLevel);
  // Over stdio there is no /approvals to decide at: only the client itself (elicitation) can approve.
  const events = new GovernanceEvents();
  const governance = new Governance({ config, events, ...(approvalsApi ? {} : { approvals: new ApprovalQueue({ config, events, clientOnly: true }) }) });
  // The audit log records every event from here on; it is closed (flushed) after everything else.
  const audit = config.audit.enabled && config.security.enabled ? openAuditLog(config, log) : undefined;
  if (audit) governance.events.subscribe(audit);
  const codeMode = new CodeMode(config, { log, version, governance });
  let engine: Engine;
  try {
    engine = Engine.create(config, { log, tools: codeMode, governance });
  } catch (error) {
    await codeMode.close();
    await audit?.close();
    throw error;
  }
  await codeMode.start();
  // Analysis, policy and audit switched off (security.enabled): analyze_code still loads the grammars on first use.
  if (config.security.enabled) await governance.analyzer.ready();
  for (const server of codeMode.status()) {
    if (server.state === "failed") log.warn({ server: server.name, error: server.error }, "upstream MCP server unavailable");
    else log.info({ server: server.name, state: server.state, tools: server.toolCount }, "upstream MCP server");
  }
  // Anomaly rules and metrics watch the events for as long as the process lives.
  return observeServer({ engine, codeMode, config, governance, ...(audit ? { audit } : {}), log, version, startedAt: Date.now() }, audit ? { audit } : {}).ctx;
}

/** "full" or "codemode (execute_code, search_tools)": which tools MCP lists. */
function toolProfileLine(config: SandgateConfig): string {
  return config.server.toolProfile === "full" ? "full" : "codemode (execute_code, search_tools; set SANDGATE_TOOLS=full for every tool)";
}

/** The most a stop may take after a signal: what is stuck then (a helper, an upstream) is left to die with the process. */
const STOP_DEADLINE_MS = 10_000;
/** Of that, what the engine, code mode and the analyzer get; the audit log is flushed in the rest. */
const CONTEXT_DEADLINE_MS = 7_000;

/** Whether `work` settled within `ms`. */
function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([work.then(() => true, () => true), late]).finally(() => clearTimeout(timer));
}

async function closeContext(ctx: ServerContext, deadlineMs = Infinity): Promise<boolean> {
  const parts = Promise.all([ctx.engine.close(), ctx.codeMode.close(), ctx.governance.analyzer.close()]);
  const done = Number.isFinite(deadlineMs) ? await settlesWithin(parts, deadlineMs) : (await parts, true);
  if (!done) ctx.log.warn({ waitedMs: deadlineMs }, "some sandboxes, file helpers or upstream servers did not stop in time; exiting without them");
  // Last: it writes what the engine and code mode recorded while they stopped.
  await ctx.audit?.close();
  return done;
}

export async function runServe(config: SandgateConfig, version: string): Promise<number> {
  assertSafeToServe(config.server);
  const ctx = await context(config, version);
  let closed = false;
  try {
    const server = await startHttpServer(ctx);
    ctx.log.info({ url: server.url, toolProfile: config.server.toolProfile }, "listening");
    const upstream = ctx.codeMode
      .status()
      .map((s) => `${s.name} (${s.state === "ready" ? `${s.toolCount} tools` : s.state})`)
      .join(", ");
    process.stdout.write(
      `sandgate ${version} listening on ${server.url}\n  MCP (Streamable HTTP): ${server.url}/mcp (tools: ${toolProfileLine(config)})\n  REST API docs: ${server.url}/docs\n` +
        (upstream ? `  Upstream MCP servers: ${upstream}\n` : ""),
    );
    const signal = await waitForSignal();
    ctx.log.info({ signal }, "stopping");
    const started = Date.now();
    // A stop ends within STOP_DEADLINE_MS whatever is stuck; a second signal ends it at once.
    const force = setTimeout(() => process.exit(0), STOP_DEADLINE_MS);
    force.unref();
    const now = (): void => process.exit(0);
    process.once("SIGINT", now);
    process.once("SIGTERM", now);
    await server.close();
    const clean = await closeContext(ctx, Math.max(1000, Math.min(CONTEXT_DEADLINE_MS, STOP_DEADLINE_MS - 1000 - (Date.now() - started))));
    closed = true;
    clearTimeout(force);
    // Something left running (a helper that would not die) must not keep the process alive.
    if (!clean) process.exit(0);
  } finally {
    if (!closed) await closeContext(ctx);
  }
  return 0;
}

export async function runStdio(config: SandgateConfig, version: string): Promise<number> {
  // stdout carries MCP messages only: whatever a dependency prints through console goes to stderr.
  console.log = console.info = console.debug = console.error;
  const ctx = await context(config, version, false);
  try {
    await Promise.race([serveStdio(ctx), waitForSignal()]);
  } finally {
    await closeContext(ctx);
  }
  return 0;
}
