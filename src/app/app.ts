// The one composition root: the parts of a running sandgate (governance and its events, the audit
// log, code mode, the engine, the observers) built, started and closed in one order for every caller.

import type { SandgateConfig } from "../config/index.js";
import { CodeMode } from "../features/codemode/index.js";
import { Engine } from "../execution/index.js";
import { ApprovalQueue, Governance, GovernanceEvents, type AnomalyDetector, type ApprovalBroker } from "../features/governance/index.js";
import type { RunnerKind } from "../languages/index.js";
import { sandboxCallHandler, sandboxOperations } from "../operations/sandbox-calls.js";
// Observers watch events and count; they serve nothing (the HTTP server reads what they hold).
import type { ServerMetrics } from "../server/metrics.js";
import { observeServer } from "../server/observers.js";
import { operations } from "../server/operations.js";
import { openAuditLog, type AuditLog } from "../store/index.js";
import { createLogger, type Logger } from "../util/logger.js";
import { settlesWithin } from "./settles-within.js";

export interface AppOptions {
  /** Default: a logger at config.logLevel on stderr. */
  log?: Logger;
  /** Reported by the server and (when given) to upstream servers as the client's version; default "0.0.0". */
  version?: string;
  /** Warm sandboxes per runner; default config.pool (`sandgate exec` wants none). */
  pool?: Record<RunnerKind, number>;
  /**
   * Who decides approvals: "queue" (default: the client's elicitation, else GET/POST /approvals),
   * "client" (the client's elicitation only; stdio has no /approvals), or a broker of the caller's own.
   */
  approvals?: "queue" | "client" | ApprovalBroker;
  /**
   * Whether the engine and code mode are governed (default true). Without, code runs unjudged and
   * unrecorded (library use, tests of the bare engine); `governance` is then one of its own, apart.
   */
  governed?: boolean;
  /**
   * Whether code mode's upstream servers are connected and their tools handed to the sandboxes
   * (default true). Without, `codeMode` is an empty one apart from the engine, made on first use.
   */
  upstream?: boolean;
  /** Whether governance events are written to the audit log; default config.audit.enabled && config.security.enabled. */
  audit?: boolean;
  /** Whether start() loads the analyzer's grammars and workers (when governed and security.enabled); default true. One run loads what it uses. */
  warmAnalyzer?: boolean;
  /** Whether start() subscribes the anomaly rules and (metrics.enabled) the metrics; default true. */
  observe?: boolean;
  /** Milliseconds since the epoch for the anomaly rules; tests pass a fake clock. */
  now?: () => number;
  /** How long code that ignores an interrupt gets before its interpreter is killed; the engine's default unless given (tests shorten it). */
  interruptGraceMs?: number;
}

export interface AppCloseOptions {
  /** The most the engine, code mode and the analyzer get to stop; the audit log is flushed after it. Default: no limit. */
  deadlineMs?: number;
}

/**
 * A sandgate: what a server surface needs (it has the shape of the server's context) and its
 * lifecycle. Built at createApp (nothing waits there), started by start(), stopped by close().
 */
export interface App {
  readonly config: SandgateConfig;
  readonly log: Logger;
  readonly version: string;
  /** When createApp ran, milliseconds since the epoch. */
  readonly startedAt: number;
  readonly engine: Engine;
  /** Upstream servers and their catalog; an empty one when none is configured or `upstream` is false. */
  readonly codeMode: CodeMode;
  /** Analysis, policy, approvals and events; the engine runs through its hooks (engineHooks) when governed. */
  readonly governance: Governance;
  /** The audit log of the governance events, when kept. */
  readonly audit?: AuditLog;
  /** The anomaly rules, once started with `observe`. */
  readonly anomalies?: AnomalyDetector;
  /** Prometheus metrics, once started with `observe` and metrics.enabled. */
  readonly metrics?: ServerMetrics;
  /**
   * Connects the upstream servers (failures are in codeMode.status(), not thrown), loads the analyzer,
   * subscribes the observers; a failure closes the app and is thrown.
   */
  start(): Promise<void>;
  /**
   * Stops the observers, then the engine, code mode and the analyzer together (within `deadlineMs`),
   * then flushes the audit log, last, so it holds what they recorded while stopping. Resolves whether
   * everything stopped in time. Idempotent.
   */
  close(options?: AppCloseOptions): Promise<boolean>;
}

/** Builds the parts in order (events, audit, governance, code mode, engine); what was built is closed again if a later part throws. */
export function createApp(config: SandgateConfig, options: AppOptions = {}): App {
  const log = options.log ?? createLogger(config.logLevel);
  const governed = options.governed ?? true;
  const upstream = options.upstream ?? true;
  // The audit log records every event from here on; it is closed (flushed) after everything else.
  const events = new GovernanceEvents();
  const audit = governed && (options.audit ?? (config.audit.enabled && config.security.enabled)) ? openAuditLog(config, log) : undefined;
  if (audit) events.subscribe(audit);
  const broker = options.approvals ?? "queue";
  const approvals = broker === "queue" ? undefined : broker === "client" ? new ApprovalQueue({ config, events, clientOnly: true }) : broker;
  const newGovernance = (): Governance => new Governance({ config, events, ...(approvals ? { approvals } : {}) });
  // Ungoverned, or without upstream servers, the server still needs one of each: made on first use.
  let governance = governed ? newGovernance() : undefined;
  let codeMode: CodeMode | undefined;
  const version = options.version ?? "0.0.0";
  const codeModeOptions = { log, ...(options.version !== undefined ? { version } : {}), ...(governance ? { governance } : {}) };
  // Sandgate's operations that code may call, each run for the caller whose code runs, on the app built below.
  const callable = sandboxOperations(operations.list());
  const maxCalls = config.codeMode.maxToolCallsPerExecution;
  let engine: Engine;
  try {
    if (upstream) codeMode = new CodeMode(config, codeModeOptions);
    engine = Engine.create(config, {
      log,
      ...(options.pool ? { pool: options.pool } : {}),
      ...(options.interruptGraceMs !== undefined ? { interruptGraceMs: options.interruptGraceMs } : {}),
      ...(codeMode ? { tools: codeMode } : {}),
      ...(governance ? { hooks: governance.engineHooks() } : {}),
      operations: { handlerFor: ({ owner }) => sandboxCallHandler(callable, () => app, { owner, maxCalls, log }) },
    });
  } catch (error) {
    void Promise.all([codeMode?.close(), audit?.close()]).catch(() => undefined);
    throw error;
  }
  const built = engine;

  let stopObserving: (() => void) | undefined;
  let closing: Promise<boolean> | undefined;
  const app: App & { anomalies?: AnomalyDetector; metrics?: ServerMetrics } = {
    config,
    log,
    version,
    startedAt: Date.now(),
    engine: built,
    get codeMode(): CodeMode {
      codeMode ??= new CodeMode({ ...config, mcpServers: {} }, codeModeOptions);
      return codeMode;
    },
    get governance(): Governance {
      governance ??= newGovernance();
      return governance;
    },
    ...(audit ? { audit } : {}),
    async start() {
      try {
        if (upstream) await app.codeMode.start();
        // Analysis, policy and audit switched off (security.enabled): analyze_code still loads the grammars on first use.
        if (governed && config.security.enabled && (options.warmAnalyzer ?? true)) await app.governance.analyzer.ready();
        // Anomaly rules and metrics watch the events for as long as the app lives.
        if (options.observe ?? true) {
          const observed = observeServer(app, { ...(audit ? { audit } : {}), ...(options.now ? { now: options.now } : {}) });
          app.anomalies = observed.ctx.anomalies;
          if (observed.ctx.metrics) app.metrics = observed.ctx.metrics;
          stopObserving = () => observed.stop();
        }
      } catch (error) {
        await app.close();
        throw error;
      }
    },
    close(closeOptions = {}) {
      closing ??= (async () => {
        stopObserving?.();
        const deadlineMs = closeOptions.deadlineMs ?? Infinity;
        const parts = Promise.all([built.close(), codeMode?.close(), governance?.analyzer.close()]);
        try {
          if (!Number.isFinite(deadlineMs)) return (await parts, true);
          const done = await settlesWithin(parts, deadlineMs);
          if (!done) log.warn({ waitedMs: deadlineMs }, "some sandboxes, file helpers or upstream servers did not stop in time; exiting without them");
          return done;
        } finally {
          // Last: it writes what the engine and code mode recorded while they stopped.
          await audit?.close();
        }
      })();
      return closing;
    },
  };
  return app;
}
