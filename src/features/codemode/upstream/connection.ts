// One configured upstream server over its whole life: first start, tool list refreshes, restarts with backoff
// after a crash, retries with a longer backoff once it is given up, tool calls with timeouts, and shutdown.

import { CallToolResultSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { UpstreamServerConfig } from "../../../config/index.js";
import { SandgateError } from "../../../errors/index.js";
import type { Logger } from "../../../util/logger.js";
import { callError, describeFailure, isConnectionLoss, limitExceededError, stoppedDuringCallError, timeoutError } from "./call-errors.js";
import { httpKinds, isStdioConfig, UpstreamSession, type LostReason } from "./session.js";
import { RetrySchedule } from "./retry-schedule.js";
import { StderrTail } from "./stderr-tail.js";
import { ToolListLimitError } from "./tool-listing.js";
import type { CallOptions, UpstreamState, UpstreamStatus, UpstreamTransportKind } from "./types.js";

const MAX_BACKOFF_MS = 30_000;
/** A server that stayed up this long has recovered: its next crash starts the backoff afresh. */
const STABLE_AFTER_MS = 10 * 60_000;
/**
 * Least time between two listings of one server's tools after tools/list_changed, and how many times the
 * main-thread work of the last refresh (parsing the listing, then the catalog and its files) it is at least:
 * a server that announces changes without pause holds the host's main thread about a tenth of the time.
 * Counting the rebuild alone let a listing that was costly to take in (thousands of schemas) follow 1 s later.
 */
const REFRESH_GAP_MS = 1000;
const REFRESH_GAP_FACTOR = 10;
/** However slow the rebuild, a change is listed within this long. */
const REFRESH_GAP_MAX_MS = 10_000;
/** setTimeout fires at once for longer delays. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface ConnectionOptions {
  name: string;
  config: UpstreamServerConfig;
  log: Logger;
  connectTimeoutMs: number;
  defaultCallTimeoutMs: number;
  maxRestarts: number;
  backoffBaseMs: number;
  /** First retry of a failed (given-up) server; doubles up to retryMaxMs. */
  retryBaseMs: number;
  /** Longest wait between two retries of a failed server; 0 never retries. */
  retryMaxMs: number;
  maxMessageBytes: number;
  /** Tools one server may list (codeMode.maxToolsPerServer). */
  maxTools: number;
  /** Masks configured secrets in reasons, status and logs. */
  redact: (text: string) => string;
  clientInfo: { name: string; version: string };
  onToolsChanged: (tools: Tool[]) => void;
}

export class UpstreamConnection {
  private state: UpstreamState;
  private kind: UpstreamTransportKind;
  private session: UpstreamSession | undefined;
  /** A session still opening, so close() can stop it. */
  private pending: UpstreamSession | undefined;
  private toolList: Tool[] = [];
  private restarts = 0;
  /** Restarts since the server last ran stably; the backoff and the give-up limit count these. */
  private streak = 0;
  private readyAt = 0;
  /** Why the server is not ready, safe to show to sandboxed callers. */
  private reason: string | undefined;
  /** `reason` plus the server's stderr tail, for operators (status). */
  private detail: string | undefined;
  private serverInfo: { name: string; version: string } | undefined;
  private instructions: string | undefined;
  private readonly stderr = new StderrTail();
  private restartTimer: NodeJS.Timeout | undefined;
  /** Retries of the server once it failed; the state stays failed while one runs, until it is ready. */
  private readonly retrySchedule: RetrySchedule;
  private refreshingFor: UpstreamSession | undefined;
  /** When the tools were last listed (start, restart or refresh), and the wait before a refresh may list them again. */
  private listedAt = 0;
  private refreshGapMs = REFRESH_GAP_MS;
  private started = false;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: ConnectionOptions) {
    const { config } = options;
    this.state = config.disabled === true ? "disabled" : "connecting";
    this.kind = isStdioConfig(config) ? "stdio" : httpKinds(config)[0]!;
    this.retrySchedule = new RetrySchedule(options.retryBaseMs, options.retryMaxMs);
  }

  get name(): string {
    return this.options.name;
  }

  /** First connection; never rejects, a failure is recorded in status. */
  async start(): Promise<void> {
    if (this.started || this.state !== "connecting") return;
    this.started = true;
    try {
      this.setReady(await this.open());
    } catch (error) {
      if (this.closing) return;
      this.setFailed("could not start", error);
      this.emit([]);
    }
  }

  status(): UpstreamStatus {
    const status: UpstreamStatus = {
      name: this.name,
      transport: this.kind,
      state: this.state,
      toolCount: this.toolList.length,
      restarts: this.restarts,
    };
    if (this.state !== "ready" && this.detail !== undefined) status.error = this.detail;
    const nextRetryAt = this.retrySchedule.nextAt;
    if (nextRetryAt !== undefined) status.nextRetryAt = new Date(nextRetryAt).toISOString();
    const pid = this.session?.pid;
    if (pid !== undefined) status.pid = pid;
    if (this.serverInfo) status.serverInfo = this.serverInfo;
    if (this.instructions !== undefined) status.instructions = this.instructions;
    return status;
  }

  tools(): Tool[] {
    return this.toolList.slice();
  }

  async callTool(tool: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<CallToolResult> {
    const session = this.session;
    if (this.state !== "ready" || !session) throw this.unavailable();
    const { signal } = options;
    const configured = options.timeoutMs ?? (this.options.config.timeoutS !== undefined ? this.options.config.timeoutS * 1000 : this.options.defaultCallTimeoutMs);
    const timeoutMs = Math.min(configured, MAX_TIMER_MS);
    const name = this.name;
    if (signal?.aborted) throw abortReason(signal, name, tool);
    return await new Promise<CallToolResult>((resolve, reject) => {
      // Our own controller: the SDK never removes its abort listener, and the caller's signal may live long.
      const controller = new AbortController();
      const cleanup = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        session.inFlight.delete(onLost);
      };
      const fail = (error: Error): void => {
        cleanup();
        reject(error);
      };
      const timer = setTimeout(() => {
        const error = timeoutError(name, tool, timeoutMs);
        fail(error);
        controller.abort(error); // sends notifications/cancelled upstream
      }, timeoutMs);
      const onAbort = (): void => {
        const reason = abortReason(signal!, name, tool);
        fail(reason);
        controller.abort(reason);
      };
      const onLost = (why: LostReason): void =>
        fail(
          why instanceof Error
            ? limitExceededError(name, tool, why)
            : stoppedDuringCallError(name, tool, why === "closed" ? "sandgate closed the connection" : undefined),
        );
      signal?.addEventListener("abort", onAbort, { once: true });
      session.inFlight.add(onLost);
      session.client
        // The SDK's own timeout would otherwise default to 60 s.
        .callTool({ name: tool, arguments: args }, CallToolResultSchema, { signal: controller.signal, timeout: timeoutMs })
        .then(
          (result) => {
            cleanup();
            resolve(result as CallToolResult);
          },
          (error: unknown) => {
            fail(callError(name, tool, error, timeoutMs));
            // An HTTP transport never closes by itself: a forgotten session (server restarted) or a
            // network failure is how a lost connection shows, so reconnect as after a crash.
            if (session.kind !== "stdio" && !controller.signal.aborted && isConnectionLoss(error)) {
              this.handleClose(session, `lost the connection: ${this.describe(error)}`);
            }
          },
        );
    });
  }

  /** Stops restarts, closes the connection and kills the server; idempotent. */
  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.retrySchedule.cancel();
    const sessions = [this.session, this.pending].filter((s): s is UpstreamSession => s !== undefined);
    this.session = undefined;
    this.pending = undefined;
    if (this.state !== "disabled") this.state = "closed";
    await Promise.all(sessions.map((s) => s.close()));
  }

  private async open(): Promise<UpstreamSession> {
    const { name, config, clientInfo, connectTimeoutMs, log } = this.options;
    const session = await UpstreamSession.open({
      name,
      config,
      clientInfo,
      timeoutMs: connectTimeoutMs,
      maxMessageBytes: this.options.maxMessageBytes,
      maxTools: this.options.maxTools,
      redact: this.options.redact,
      log,
      stderr: this.stderr,
      onCreated: (s) => (this.pending = s),
      cancelled: () => this.closing !== undefined,
      hooks: {
        onClose: (s) => this.handleClose(s),
        onToolsListChanged: (s) => {
          if (s === this.session) void this.refresh(s);
        },
        onLimit: (s, error) => {
          this.options.log.warn({ server: this.name, err: error.message }, "upstream server broke a size limit");
          if (s === this.pending) void s.close(); // still starting: open() fails with the SDK's error
          else this.handleClose(s, error.message, error);
        },
      },
    });
    this.pending = undefined;
    if (this.closing) {
      await session.close();
      throw new Error("closed while starting");
    }
    return session;
  }

  private setReady(session: UpstreamSession): void {
    this.session = session;
    this.state = "ready";
    this.readyAt = Date.now();
    this.listedAt = this.readyAt;
    this.kind = session.kind;
    this.reason = undefined;
    this.detail = undefined;
    this.toolList = session.tools;
    const info = session.client.getServerVersion();
    this.serverInfo = info ? { name: info.name, version: info.version } : undefined;
    this.instructions = session.client.getInstructions();
    this.options.log.info({ server: this.name, transport: session.kind, tools: session.tools.length, pid: session.pid }, "upstream server ready");
    this.emit(this.toolList);
    if (session.toolsStale) void this.refresh(session);
  }

  private setFailed(what: string, error: unknown): void {
    this.state = "failed";
    this.reason = `${what}: ${this.describe(error)}`;
    this.detail = this.withStderr(this.reason);
    this.toolList = [];
    this.options.log.error({ server: this.name, err: this.reason }, "upstream server failed");
    // A tool list over the caps would only be listed again.
    if (!(error instanceof ToolListLimitError)) this.scheduleRetry();
  }

  /** A failed server is tried again (retry-schedule.ts), until close(). */
  private scheduleRetry(): void {
    if (this.closing) return;
    this.retrySchedule.plan(() => void this.retry());
  }

  private async retry(): Promise<void> {
    if (this.closing || this.state !== "failed") return;
    this.retrySchedule.running = true;
    this.streak = 0;
    try {
      const session = await this.open();
      this.retrySchedule.running = false;
      // The retry count is kept until the server has run stably (handleClose): one that comes back only to
      // crash again must not be retried at the first, shortest wait forever.
      this.options.log.info({ server: this.name, retries: this.retrySchedule.made }, "failed upstream server is back");
      this.setReady(session);
    } catch (error) {
      this.retrySchedule.running = false;
      if (this.closing) return;
      const n = this.retrySchedule.made;
      this.reason = `${this.reason?.replace(/; retry \d+ failed: [\s\S]*$/, "") ?? "failed"}; retry ${n} failed: ${this.describe(error)}`;
      this.detail = this.withStderr(this.reason);
      this.options.log.warn({ server: this.name, retries: n, err: this.describe(error) }, "retrying a failed upstream server failed");
      if (!(error instanceof ToolListLimitError)) this.scheduleRetry();
    }
  }

  private withStderr(reason: string): string {
    const tail = this.stderr.text();
    return this.options.redact(tail === "" ? reason : `${reason}\nstderr (last lines):\n${tail}`);
  }

  /** A failure's one-line reason with configured secrets masked (a server may echo its URL or args). */
  private describe(error: unknown): string {
    return this.options.redact(describeFailure(error));
  }

  /** The transport closed without us asking: the server crashed or hung up. */
  private handleClose(session: UpstreamSession, reason = "stopped unexpectedly", lost: LostReason = "stopped"): void {
    if (session !== this.session || this.closing) return; // an opening session fails through open()
    this.session = undefined;
    for (const reject of session.inFlight) reject(lost);
    session.inFlight.clear();
    session.reapOrphans();
    void session.close();
    this.reason = this.options.redact(reason);
    this.detail = this.withStderr(this.reason);
    this.options.log.warn({ server: this.name, restarts: this.restarts, err: this.reason }, "upstream server stopped unexpectedly");
    if (Date.now() - this.readyAt >= STABLE_AFTER_MS) {
      this.streak = 0;
      this.retrySchedule.reset();
    }
    this.restartOrGiveUp();
  }

  private restartOrGiveUp(): void {
    const { maxRestarts, backoffBaseMs, log } = this.options;
    if (this.streak >= maxRestarts) {
      this.state = "failed";
      this.reason = `${this.reason ?? "stopped"}; gave up after ${this.streak} restart${this.streak === 1 ? "" : "s"} in a row`;
      this.detail = this.withStderr(this.reason);
      this.toolList = [];
      log.error({ server: this.name, restarts: this.restarts }, "upstream server given up");
      this.emit([]);
      this.scheduleRetry();
      return;
    }
    const delay = Math.min(backoffBaseMs * 2 ** this.streak, MAX_BACKOFF_MS);
    this.streak++;
    this.restarts++;
    this.state = "restarting";
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.restart();
    }, delay);
    this.restartTimer.unref();
  }

  private async restart(): Promise<void> {
    if (this.closing) return;
    try {
      this.setReady(await this.open());
    } catch (error) {
      if (this.closing) return;
      if (error instanceof ToolListLimitError) {
        // Another restart would list the same tools again.
        this.setFailed("could not restart", error);
        this.emit([]);
        return;
      }
      this.reason = `could not restart: ${this.describe(error)}`;
      this.detail = this.withStderr(this.reason);
      this.options.log.warn({ server: this.name, err: this.reason }, "upstream restart failed");
      this.restartOrGiveUp();
    }
  }

  /** Re-lists tools after tools/list_changed, again if another change arrives meanwhile. */
  private async refresh(session: UpstreamSession): Promise<void> {
    if (this.refreshingFor === session) return; // the running loop sees toolsStale
    this.refreshingFor = session;
    try {
      while (session.toolsStale && session === this.session) {
        const wait = this.listedAt + this.refreshGapMs - Date.now();
        if (wait > 0) {
          await new Promise((resolve) => setTimeout(resolve, wait).unref());
          if (session !== this.session || this.closing) return;
        }
        this.listedAt = Date.now();
        // The loop's busy time while the listing arrives and is taken in: its cost, plus whatever else ran.
        const since = performance.eventLoopUtilization();
        const tools = await session.listTools(Date.now() + this.options.connectTimeoutMs);
        // The SDK parsed the last page in this same task; let the loop serve before the catalog is rebuilt.
        await new Promise((resolve) => setImmediate(resolve));
        if (session !== this.session) return;
        session.tools = tools;
        this.toolList = tools;
        this.emit(tools);
        const busyMs = performance.eventLoopUtilization(since).active;
        this.refreshGapMs = Math.min(REFRESH_GAP_MAX_MS, Math.max(REFRESH_GAP_MS, REFRESH_GAP_FACTOR * busyMs));
      }
    } catch (error) {
      if (error instanceof ToolListLimitError && session === this.session && !this.closing) this.refuseToolList(session, error);
      else this.options.log.warn({ server: this.name, err: this.describe(error) }, "refreshing upstream tools failed");
    } finally {
      if (this.refreshingFor === session) this.refreshingFor = undefined;
    }
  }

  /** A refreshed tool list broke a cap: the server is failed (no restarts, it would list the same) and leaves the catalog. */
  private refuseToolList(session: UpstreamSession, error: ToolListLimitError): void {
    this.session = undefined;
    for (const reject of session.inFlight) reject("closed");
    session.inFlight.clear();
    void session.close();
    this.setFailed("refreshing its tools failed", error);
    this.emit([]);
  }

  private emit(tools: Tool[]): void {
    this.options.onToolsChanged(tools.slice());
  }

  private unavailable(): SandgateError {
    const server = `upstream server \`${this.name}\``;
    let message: string;
    switch (this.state) {
      case "connecting":
        message = `${server} is still starting`;
        break;
      case "restarting":
        message = `${server} is restarting (restart ${this.streak} of ${this.options.maxRestarts}): ${this.reason ?? "it stopped"}`;
        break;
      case "failed":
        message = `${server} is not available: ${this.reason ?? "it failed"}${this.retrySchedule.note()}`;
        break;
      case "disabled":
        message = `${server} is disabled in the configuration`;
        break;
      case "closed":
        message = `${server} is closed`;
        break;
      case "ready":
        message = `${server} is not connected`;
        break;
    }
    const at = this.retrySchedule.nextAt;
    const retry = at === undefined ? {} : { nextRetryAt: new Date(at).toISOString() };
    return new SandgateError("UPSTREAM_UNAVAILABLE", message, { data: { server: this.name, state: this.state, ...retry } });
  }

}

/** The caller's abort reason when it is an Error (an AbortError by default), else an AbortError wrapping it. */
function abortReason(signal: AbortSignal, server: string, tool: string): Error {
  if (signal.reason instanceof Error) return signal.reason;
  const error = new Error(`the call to \`${server}.${tool}\` was aborted`, { cause: signal.reason });
  error.name = "AbortError";
  return error;
}
