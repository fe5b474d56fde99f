// The execution engine: validates a request, picks a sandbox (warm pool for stateless calls,
// the session's own otherwise), runs the code and shapes the result callers see.

import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { SandgateConfig } from "../config/index.js";
import { SandgateError } from "../errors/index.js";
import {
  giveToSandbox,
  prepareRuntime,
  removeIdleCgroups,
  resolveLimits,
  sandboxShapeKey,
  startSandbox,
  WarmPool,
  type PoolKindState,
  type ResolvedLimits,
  type RunnerKind,
  type RunOutcome,
  type RunStatus,
  type Sandbox,
  type SandboxRuntime,
} from "../sandbox/index.js";
import { directorySize } from "../util/dir-size.js";
import { silentLogger, type Logger } from "../util/logger.js";
import { pruneOutputs, saveOutput, shapeOutput, type ShapedStream } from "./output.js";
import { shapeText, shapeValue } from "./shaping.js";
import { countTokens, estimateJsonTokens, estimateTokens } from "./tokens.js";
import type { ToolCallRecord, ToolCallScope } from "./tool-calls.js";
import { prepareCode } from "./prepare-code.js";
import { commandToBash } from "./command.js";
import { checkRequest, type ExecuteRequest } from "./request.js";
import { listWorkspaceFiles, readWorkspaceFile, writeWorkspaceFile, type FileEncoding, type WorkspaceFileLimits } from "./workspace-files.js";
import { LOCAL_OWNER, SessionManager, type Session, type SessionInfo } from "./sessions.js";

export interface ErrorInfo {
  type: string;
  message: string;
  traceback: string;
}

export interface ExecutionResult {
  status: RunStatus;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  value?: unknown;
  error?: ErrorInfo;
  durationMs: number;
  truncated: boolean;
  sessionId: string | null;
  /** Where the full stdout/stderr were saved when they were longer than shown. */
  fullOutput?: { stdout?: string; stderr?: string };
  /** The session's interpreter state was lost in this call (timeout, crash, shell exit); files remain. */
  stateReset?: boolean;
  /** What was cut from stdout to fit the token budget, and where the full text is. */
  outputNote?: string;
  /** Upstream tools the code called, in order. */
  toolCalls: ToolCallRecord[];
  tokens: TokenCounts;
}

/** Token accounting (o200k): what reaches the agent against what stayed in the sandbox. */
export interface TokenCounts {
  /** Tokens of stdout, stderr and value as returned. */
  returned: number;
  /** Tokens of the full output before it was shortened for the agent. */
  output: number;
  /** Tokens of upstream tool results the code received; none of them reached the agent. */
  toolResults: number;
}

/** Code mode as the engine sees it: a read-only tree to mount and a tool-call scope per run. */
export interface ToolProvider {
  toolsDir: string;
  beginExecution(): ToolCallScope;
}

export interface CommandRequest extends Omit<ExecuteRequest, "code" | "language"> {
  command: string;
  /** Relative to /workspace, or absolute inside the sandbox. */
  workingDirectory?: string;
}

export interface EngineOptions {
  log?: Logger;
  /** Overrides config.pool (tests, `sandgate exec` which needs no pool). */
  pool?: Record<RunnerKind, number>;
  /** Upstream tools for code to call; without it, calls fail with a clear error. */
  tools?: ToolProvider;
}

const STATUS_ERROR_TYPE: Record<Exclude<RunStatus, "ok" | "error">, string> = {
  timeout: "Timeout",
  memory_limit: "MemoryLimit",
  output_limit: "OutputLimit",
  killed: "Killed",
};

export class Engine {
  readonly sessions: SessionManager;
  private readonly pool: WarmPool;
  private readonly defaultLimits: ResolvedLimits;
  private readonly retiring = new Set<Promise<void>>();
  private readonly running = new Set<Sandbox>();
  private closing = false;
  private lastPrune = 0;

  private constructor(
    readonly config: SandgateConfig,
    readonly runtime: SandboxRuntime,
    log: Logger,
    poolSizes: Record<RunnerKind, number>,
    private readonly tools: ToolProvider | undefined,
  ) {
    this.defaultLimits = resolveLimits(config);
    this.pool = new WarmPool(runtime, poolSizes, this.defaultLimits, log);
    this.sessions = new SessionManager(runtime, {
      max: config.sessions.max,
      maxPerOwner: config.sessions.maxPerIdentity,
      idleTtlMs: config.sessions.idleTtlS * 1000,
      limits: this.defaultLimits,
    });
  }

  /** Prepares the sandbox runtime (throws SANDBOX_UNAVAILABLE when isolation is impossible) and fills the pool. */
  static create(config: SandgateConfig, options: EngineOptions = {}): Engine {
    const { bwrap, ...interpreters } = config.paths;
    const runtime = prepareRuntime({
      sandboxDir: config.sandboxDir,
      useCgroups: config.cgroups === "auto",
      hostUser: config.sandboxUser,
      volumes: config.volumes,
      ...(options.tools ? { toolsDir: options.tools.toolsDir } : {}),
      ...(bwrap ? { bwrap } : {}),
      interpreters,
    });
    const engine = new Engine(config, runtime, options.log ?? silentLogger, options.pool ?? config.pool, options.tools);
    engine.pool.fill();
    return engine;
  }

  poolState(): Record<RunnerKind, PoolKindState> {
    return this.pool.state();
  }

  /** Starts a session of `owner` (or returns its live one with this id). */
  createSession(id?: string, owner: string = LOCAL_OWNER): SessionInfo {
    this.assertOpen();
    return this.sessions.info(this.sessions.open(owner, id));
  }

  /** `owner`'s live sessions; nobody sees another owner's. */
  listSessions(owner: string = LOCAL_OWNER): SessionInfo[] {
    return this.sessions.list(owner);
  }

  /**
   * The live session `id`, started when there is none. `endedBefore` says why an earlier
   * session with this id ended, so callers can tell the user its state is gone.
   */
  ensureSession(id: string, owner: string = LOCAL_OWNER): { info: SessionInfo; created: boolean; endedBefore?: string } {
    this.assertOpen();
    const created = !this.sessions.has(owner, id);
    const endedBefore = created ? this.sessions.endedReason(owner, id) : undefined;
    const info = this.sessions.info(this.sessions.open(owner, id));
    return { info, created, ...(endedBefore !== undefined ? { endedBefore } : {}) };
  }

  /** Runs a shell line with bash (pipes, redirections) in a subshell of the session's shell. */
  executeCommand(request: CommandRequest): Promise<ExecutionResult> {
    if (request.command.includes("\u0000")) throw new SandgateError("INVALID_INPUT", "command must not contain NUL bytes", { data: { field: "command" } });
    if (request.workingDirectory?.includes("\u0000")) {
      throw new SandgateError("INVALID_INPUT", "working_directory must not contain NUL bytes", { data: { field: "working_directory" } });
    }
    const { command, workingDirectory, ...rest } = request;
    return this.execute({ ...rest, language: "bash", code: commandToBash(command, workingDirectory) });
  }

  private get fileLimits(): WorkspaceFileLimits {
    return { maxFileBytes: this.defaultLimits.fileSizeBytes, workspaceBytes: this.defaultLimits.workspaceBytes };
  }

  /** Reads a file of the session's workspace; waits for the session's running call to end first. */
  readFile(sessionId: string, path: string, encoding: FileEncoding = "utf8", owner: string = LOCAL_OWNER): Promise<ReturnType<typeof readWorkspaceFile>> {
    const session = this.sessions.get(owner, sessionId);
    return session.serialize(async () => readWorkspaceFile(session.workspaceDir, path, encoding, this.fileLimits));
  }

  writeFile(
    sessionId: string,
    path: string,
    content: string,
    encoding: FileEncoding = "utf8",
    owner: string = LOCAL_OWNER,
  ): Promise<ReturnType<typeof writeWorkspaceFile>> {
    const session = this.sessions.get(owner, sessionId);
    return session.serialize(async () => {
      const written = writeWorkspaceFile(session.workspaceDir, path, content, encoding, this.fileLimits, (hostPath) => giveToSandbox(this.runtime, hostPath));
      session.lastUsedAt = Date.now();
      return written;
    });
  }

  listFiles(sessionId: string, path?: string, owner: string = LOCAL_OWNER): Promise<ReturnType<typeof listWorkspaceFiles>> {
    const session = this.sessions.get(owner, sessionId);
    return session.serialize(async () => listWorkspaceFiles(session.workspaceDir, path));
  }

  getSession(id: string, owner: string = LOCAL_OWNER): SessionInfo {
    return this.sessions.info(this.sessions.get(owner, id));
  }

  /** Stops `owner`'s session `id`; another owner's id is SESSION_NOT_FOUND like one no one uses. */
  stopSession(id: string, owner: string = LOCAL_OWNER): Promise<void> {
    return this.sessions.stop(owner, id);
  }

  /** Stops every session of `owner` (an anonymous caller that is gone for good). */
  stopSessionsOf(owner: string, why: string): Promise<void> {
    return this.sessions.stopOwnedBy(owner, why);
  }

  /** Throws the error execute() would throw for this request's input, without running anything. */
  validate(request: ExecuteRequest): void {
    this.checked(request);
  }

  private checked(request: ExecuteRequest): { language: ReturnType<typeof checkRequest>; limits: ResolvedLimits } {
    this.assertOpen();
    const language = checkRequest(request, this.config);
    const limits = resolveLimits(this.config, {
      ...(request.flavor ? { flavor: request.flavor } : {}),
      ...(request.timeoutS !== undefined ? { timeoutS: request.timeoutS } : {}),
      ...(request.memoryMb !== undefined ? { memoryMb: request.memoryMb } : {}),
    });
    return { language, limits };
  }

  /** Runs code. Rejects only for bad input or a sandbox that cannot start; code failures are results. */
  async execute(request: ExecuteRequest): Promise<ExecutionResult> {
    const { language, limits } = this.checked(request);
    const session = request.sessionId === undefined ? undefined : this.sessions.get(request.owner ?? LOCAL_OWNER, request.sessionId);
    const prepared = prepareCode(language, request.code);
    if (!prepared.ok) {
      const stderr = prepared.error.traceback;
      const tokens = countTokens(stderr);
      return {
        status: "error",
        exitCode: 1,
        stdout: "",
        stderr,
        error: prepared.error,
        durationMs: 0,
        truncated: false,
        sessionId: session?.id ?? null,
        toolCalls: [],
        tokens: { returned: tokens, output: tokens, toolResults: 0 },
      };
    }
    const scope = this.tools?.beginExecution();
    const { kind, code, filename, mode } = prepared.prepared;
    const runRequest = {
      code,
      filename,
      ...(mode ? { mode } : {}),
      timeoutMs: limits.timeoutMs,
      // One second of slack: CPU time must never beat the wall clock to a plain busy loop.
      cpuSeconds: Math.ceil((limits.timeoutMs / 1000) * limits.cpus) + 1,
      outputCapBytes: limits.outputCapBytes,
      ...(request.onOutput ? { onOutput: request.onOutput } : {}),
      ...(scope ? { onToolCall: scope.onToolCall } : {}),
    };
    if (!session) {
      const pooled = sandboxShapeKey(limits) === sandboxShapeKey(this.defaultLimits);
      const sandbox = pooled ? await this.pool.acquire(kind) : await startSandbox(this.runtime, { kind, limits });
      try {
        const outcome = await this.runWatched(sandbox, runRequest, request.signal);
        let dir: string | undefined;
        return this.shape(outcome, limits, null, scope, (name, data) => {
          this.pruneSavedOutputs();
          dir ??= join(this.runtime.outputsDir, randomUUID());
          return saveOutput(dir, name, data, dir);
        });
      } finally {
        this.retire(sandbox, pooled);
      }
    }
    return session.serialize(() => this.runInSession(session, kind, limits, runRequest, request.signal, scope));
  }

  private async runInSession(
    session: Session,
    kind: RunnerKind,
    limits: ResolvedLimits,
    runRequest: Parameters<Sandbox["run"]>[0],
    signal: AbortSignal | undefined,
    scope: ToolCallScope | undefined,
  ): Promise<ExecutionResult> {
    session.busy = true;
    try {
      const sandbox = await this.sessions.sandboxFor(session, kind, limits);
      const outcome = await this.runWatched(sandbox, runRequest, signal).catch((error: unknown) => {
        // Cancelled while the sandbox was starting: it was killed before the code ran, and a dead
        // sandbox must not stay the session's runner.
        if (!sandbox.alive) {
          session.sandboxes.delete(kind);
          this.retire(sandbox);
        }
        throw error;
      });
      session.calls++;
      session.lastUsedAt = Date.now();
      if (outcome.sandboxDied) {
        session.sandboxes.delete(kind);
        this.retire(sandbox);
      }
      const callNo = session.calls;
      const result = this.shape(outcome, limits, session.id, scope, (name, data) =>
        saveOutput(join(session.workspaceDir, ".sandgate", "outputs"), `${callNo}-${name}`, data, "/workspace/.sandgate/outputs", (path) =>
          giveToSandbox(this.runtime, path),
        ),
      );
      if (outcome.sandboxDied || outcome.result?.resetState) result.stateReset = true;
      const used = directorySize(session.workspaceDir, limits.workspaceBytes);
      if (used > limits.workspaceBytes && result.status === "ok") {
        result.status = "error";
        result.error = {
          type: "WorkspaceLimit",
          message: `the workspace holds more than ${Math.round(limits.workspaceBytes / 1048576)} MB (the limit); delete files before writing more`,
          traceback: "",
        };
      }
      return result;
    } finally {
      session.busy = false;
      session.lastUsedAt = Date.now();
    }
  }

  private async runWatched(sandbox: Sandbox, runRequest: Parameters<Sandbox["run"]>[0], signal: AbortSignal | undefined): Promise<RunOutcome> {
    if (signal?.aborted) sandbox.terminate("killed");
    const onAbort = (): void => sandbox.terminate("killed");
    signal?.addEventListener("abort", onAbort, { once: true });
    this.running.add(sandbox);
    try {
      if (!sandbox.alive) throw new SandgateError("SANDBOX_FAILED", "the sandbox stopped before the code could run");
      return await sandbox.run(runRequest);
    } finally {
      this.running.delete(sandbox);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  private shape(
    outcome: RunOutcome,
    limits: ResolvedLimits,
    sessionId: string | null,
    scope: ToolCallScope | undefined,
    save: (name: string, data: Buffer) => string,
  ): ExecutionResult {
    const stdout = this.shapeStdout(outcome.stdout, limits, () => save("stdout.txt", outcome.stdout));
    const stderr = shapeOutput(outcome.stderr, limits.displayBytes, () => save("stderr.txt", outcome.stderr));
    const frame = outcome.result;
    const summary = scope?.finish();
    const result: ExecutionResult = {
      status: outcome.status,
      exitCode: outcome.exitCode,
      stdout: stdout.text,
      stderr: stderr.text,
      durationMs: Math.round(outcome.durationMs * 1000) / 1000,
      truncated: stdout.truncated || stderr.truncated || outcome.status === "output_limit",
      sessionId,
      toolCalls: summary?.calls ?? [],
      tokens: { returned: 0, output: 0, toolResults: summary?.tokensInSandbox ?? 0 },
    };
    if (stdout.note) result.outputNote = stdout.note;
    const value = frame?.value === undefined ? { shownTokens: 0, tokens: 0 } : this.shapeValue(frame.value, result);
    const stderrShown = countTokens(stderr.text);
    result.tokens.returned = stdout.shownTokens + stderrShown + value.shownTokens;
    result.tokens.output = stdout.tokens + (stderr.truncated ? estimateTokens(outcome.stderr.toString("utf8")).tokens : stderrShown) + value.tokens;
    if (frame?.error) result.error = frame.error;
    else if (outcome.status !== "ok" && outcome.status !== "error") {
      result.error = { type: STATUS_ERROR_TYPE[outcome.status], message: outcome.message ?? outcome.status, traceback: "" };
    } else if (outcome.status === "error" && outcome.message) {
      result.error = { type: "RunnerExited", message: outcome.message, traceback: "" };
    }
    if (stdout.fullPath || stderr.fullPath) {
      result.fullOutput = {
        ...(stdout.fullPath ? { stdout: stdout.fullPath } : {}),
        ...(stderr.fullPath ? { stderr: stderr.fullPath } : {}),
      };
    }
    return result;
  }

  /**
   * Sets result.value: a last-expression value over the token budget is shortened like JSON
   * output (it stays valid JSON). Returns its tokens as shown and in full.
   */
  private shapeValue(value: unknown, result: ExecutionResult): { shownTokens: number; tokens: number } {
    const budget = this.config.codeMode.outputTokenBudget;
    const tokens = estimateJsonTokens(value);
    result.value = value;
    if (tokens <= budget) return { shownTokens: tokens, tokens };
    const shaped = shapeValue(value, { budgetTokens: budget });
    if (!shaped.truncated) return { shownTokens: tokens, tokens };
    result.value = shaped.value;
    result.truncated = true;
    const note = `value ${shaped.note ?? "shortened"}`;
    result.outputNote = result.outputNote ? `${result.outputNote}; ${note}` : note;
    return { shownTokens: shaped.tokens, tokens: shaped.originalTokens };
  }

  /**
   * Stdout within the token budget and the display bytes is shown whole. Beyond the token
   * budget it is shortened structurally (JSON stays valid, head and tail of text); the byte cut
   * applies when even that is longer than the display bytes. The full text is saved either way.
   */
  private shapeStdout(data: Buffer, limits: ResolvedLimits, save: () => string): ShapedStream & { tokens: number; shownTokens: number; note?: string } {
    const budget = this.config.codeMode.outputTokenBudget;
    const text = data.toString("utf8");
    // A token is at least one byte: output no longer than the budget in bytes fits without a count.
    if (data.length <= Math.min(limits.displayBytes, budget)) {
      const tokens = countTokens(text);
      return { text, truncated: false, totalBytes: data.length, tokens, shownTokens: tokens };
    }
    const shaped = shapeText(text, { budgetTokens: budget });
    const tokens = shaped.originalTokens;
    if (!shaped.truncated && data.length <= limits.displayBytes) return { text, truncated: false, totalBytes: data.length, tokens, shownTokens: tokens };
    if (Buffer.byteLength(shaped.text) <= limits.displayBytes) {
      const fullPath = save();
      const note = `${shaped.note ?? "output shortened"}; the full output (${data.length} bytes) is in ${fullPath}`;
      return { text: shaped.text, truncated: true, fullPath, totalBytes: data.length, tokens, shownTokens: shaped.tokens, note };
    }
    const cut = shapeOutput(data, limits.displayBytes, save);
    return { ...cut, tokens, shownTokens: countTokens(cut.text) };
  }

  /** Saved outputs of stateless calls are kept for config.outputTtlS; pruned at most once a minute. */
  private pruneSavedOutputs(): void {
    const now = Date.now();
    if (now - this.lastPrune < 60_000) return;
    this.lastPrune = now;
    pruneOutputs(this.runtime.outputsDir, this.config.outputTtlS * 1000, now);
  }

  /** Destroys a used sandbox in the background; close() waits for every one. */
  private retire(sandbox: Sandbox, pooled = false): void {
    const done = (pooled ? this.pool.release(sandbox) : sandbox.dispose()).finally(() => this.retiring.delete(done));
    this.retiring.add(done);
  }

  private assertOpen(): void {
    if (this.closing) throw new SandgateError("SHUTTING_DOWN", "sandgate is shutting down");
  }

  /** Stops every session, pooled and running sandbox, and waits until all their processes are gone. */
  async close(): Promise<void> {
    this.closing = true;
    for (const sandbox of this.running) sandbox.terminate("killed");
    await Promise.all([this.pool.close(), this.sessions.close()]);
    while (this.retiring.size > 0) await Promise.all([...this.retiring]);
    await removeIdleCgroups();
  }
}
