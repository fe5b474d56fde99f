// The execution engine: validates a request, picks a sandbox (warm pool for stateless calls,
// the session's own otherwise), runs the code and shapes the result callers see.

import { resolve } from "node:path";
import type { SandgateConfig } from "../config/index.js";
import { registerHostPaths, SandgateError } from "../errors/index.js";
import {
  prepareRuntime,
  removeIdleCgroups,
  resolveLimits,
  sandboxShapeKey,
  startSandbox,
  FsHelper,
  WarmPool,
  type PoolKindState,
  type ResolvedLimits,
  type RunnerKind,
  type RunOutcome,
  type RunStatus,
  type Sandbox,
  type SandboxRuntime,
} from "../sandbox/index.js";
import { silentLogger, type Logger } from "../util/logger.js";
import { savedText, shapeOutput, type SavedRef, type ShapedStream } from "./output.js";
import { SavedOutputs, savedOutputRestPath, type SavedStream } from "./saved-outputs.js";
import { shapeText, shapeValue } from "./shaping.js";
import { countTokens, estimateJsonTokens, estimateTokens } from "./tokens.js";
import type { UpstreamCallRecord, UpstreamCallScope } from "./upstream-call-scope.js";
import { prepareCode } from "../languages/index.js";
import { commandToBash } from "./command.js";
import { checkRequest, type ExecuteRequest } from "./request.js";
import { listWorkspaceFiles, readWorkspaceFile, workspaceUsage, writeWorkspaceFile, type FileEncoding, type WorkspaceFileLimits, type WorkspaceTarget } from "./workspace-files.js";
import { LOCAL_OWNER, SessionManager, type Session, type SessionInfo } from "./sessions.js";
import { Admission, defaultSandboxesPerOwner, type AdmissionState, type Lease } from "./admission.js";

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
  /**
   * Resource URIs (sandgate://outputs/{id}/{stream}) of the full stdout/stderr when they were
   * longer than shown; read them with readSavedOutput, GET /outputs/{id}/{stream} or resources/read.
   */
  fullOutput?: { stdout?: string; stderr?: string };
  /** The session's interpreter state was lost in this call (timeout, crash, shell exit); files remain. */
  stateReset?: boolean;
  /** What was cut from stdout to fit the token budget, and where the full text is. */
  outputNote?: string;
  /** Upstream tools the code called, in order. */
  toolCalls: UpstreamCallRecord[];
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

/** Code mode as the engine sees it: a read-only tree to mount and an upstream-call scope per run. */
export interface ToolProvider {
  toolsDir: string;
  beginExecution(): UpstreamCallScope;
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

/** How long a session's file helper waits for the next request before it leaves. */
const FILE_HELPER_IDLE_MS = 30_000;

const STATUS_ERROR_TYPE: Record<Exclude<RunStatus, "ok" | "error">, string> = {
  timeout: "Timeout",
  memory_limit: "MemoryLimit",
  output_limit: "OutputLimit",
  killed: "Killed",
};

/** Deepest nesting of a last-expression value that is returned as it is. */
const MAX_VALUE_DEPTH = 256;

/** Whether arrays and objects in `value` nest deeper than `max`; iterative, so any depth is safe to ask about. */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(node)) if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

export class Engine {
  readonly sessions: SessionManager;
  /** Each session's file helper while it is in use (see target()). */
  private readonly fileHelpers = new Map<Session, FsHelper>();
  /** Full outputs too long to show, kept for config.outputTtlS within config.limits.savedOutputsMb. */
  readonly outputs: SavedOutputs;
  private readonly admission: Admission;
  private readonly forgetHostPaths: () => void;
  /** Sandboxes sessions hold, for eviction under pressure; each leaves this map when it closes. */
  private readonly sessionSandboxes = new Map<Sandbox, { session: Session; kind: RunnerKind }>();
  /** Runner kinds whose sandbox a session lost to eviction; its next call there reports state_reset. */
  private readonly evicted = new WeakMap<Session, Set<RunnerKind>>();
  private readonly pool: WarmPool;
  private readonly defaultLimits: ResolvedLimits;
  private readonly retiring = new Set<Promise<void>>();
  /** Sandboxes running a call, with the caller and the time the call is stopped at the latest. */
  private readonly running = new Map<Sandbox, { owner: string; deadline: number }>();
  private closing = false;

  private constructor(
    readonly config: SandgateConfig,
    readonly runtime: SandboxRuntime,
    log: Logger,
    poolSizes: Record<RunnerKind, number>,
    private readonly tools: ToolProvider | undefined,
  ) {
    this.defaultLimits = resolveLimits(config);
    this.outputs = new SavedOutputs({ dir: runtime.outputsDir, ttlMs: config.outputTtlS * 1000, capBytes: config.limits.savedOutputsMb * 1048576, log });
    this.admission = new Admission({
      maxSandboxes: config.limits.maxSandboxes,
      maxCommittedMb: config.limits.maxCommittedMemoryMb,
      waitMs: config.limits.queueWaitS * 1000,
      maxPerOwner: config.limits.maxSandboxesPerIdentity ?? defaultSandboxesPerOwner(config.limits.maxSandboxes),
      expectedWaitS: (owner) => this.expectedWaitS(owner),
    });
    this.pool = new WarmPool(runtime, poolSizes, this.defaultLimits, log, this.admission);
    // Spares give way to waiting callers, and come back once room is free and nobody waits.
    this.admission.onPressure((owner) => this.makeRoomFor(owner));
    this.admission.onRoom(() => this.pool.fill());
    // Errors that leave the server name these directories as the sandbox sees them, or not at all.
    this.forgetHostPaths = registerHostPaths([
      { hostPath: runtime.workspacesDir, shownAs: "/workspace", perEntry: true },
      { hostPath: runtime.outputsDir, shownAs: "<saved outputs>" },
      { hostPath: resolve(config.sandboxDir), shownAs: "<sandbox dir>" },
      { hostPath: runtime.runnersDir, shownAs: "/sandgate/runners" },
      ...(tools ? [{ hostPath: tools.toolsDir, shownAs: "/sandgate/tools" }] : []),
      ...config.volumes.map((v) => ({ hostPath: v.hostPath, shownAs: `/mnt/${v.name}` })),
      { hostPath: process.cwd(), shownAs: "<cwd>" },
    ]);
    this.sessions = new SessionManager(runtime, {
      max: config.sessions.max,
      maxPerOwner: config.sessions.maxPerIdentity,
      idleTtlMs: config.sessions.idleTtlS * 1000,
      evictIdleAfterMs: config.sessions.evictIdleAfterS * 1000,
      limits: this.defaultLimits,
      workspaceInodes: config.limits.maxWorkspaceInodes,
      workspaceFilesystem: config.sessions.workspaceFilesystem,
      // The file helper works in the workspace: it goes before the workspace is unmounted.
      onEnd: async (session) => {
        const helper = this.fileHelpers.get(session);
        this.fileHelpers.delete(session);
        await helper?.close();
      },
    });
    // Probed once, at start: whether each workspace gets its own filesystem.
    void this.sessions.filesystems.state();
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

  /** Live sandboxes and committed memory against the server-wide caps, and calls waiting for room. */
  admissionState(): AdmissionState {
    return this.admission.state();
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
    return { maxFileBytes: this.defaultLimits.fileSizeBytes, workspaceBytes: this.defaultLimits.workspaceBytes, workspaceInodes: this.config.limits.maxWorkspaceInodes };
  }

  /**
   * The session's workspace with its own file helper, kept for FILE_HELPER_IDLE_MS between
   * requests: the check after every call then costs a request, not a helper start (about 20 ms).
   */
  private target(session: Session): WorkspaceTarget {
    let helper = this.fileHelpers.get(session);
    if (!helper) {
      for (const [other, old] of this.fileHelpers) {
        if (!this.sessions.isCurrent(other)) {
          void old.close();
          this.fileHelpers.delete(other);
        }
      }
      helper = new FsHelper(this.runtime, session.workspaceDir, FILE_HELPER_IDLE_MS);
      this.fileHelpers.set(session, helper);
    }
    return { runtime: this.runtime, dir: session.workspaceDir, helper };
  }

  /** Reads a file of the session's workspace; waits for the session's running call to end first. */
  readFile(sessionId: string, path: string, encoding: FileEncoding = "utf8", owner: string = LOCAL_OWNER): Promise<Awaited<ReturnType<typeof readWorkspaceFile>>> {
    const session = this.sessions.get(owner, sessionId);
    return session.serialize(() => readWorkspaceFile(this.target(session), path, encoding, this.fileLimits));
  }

  writeFile(
    sessionId: string,
    path: string,
    content: string,
    encoding: FileEncoding = "utf8",
    owner: string = LOCAL_OWNER,
  ): Promise<Awaited<ReturnType<typeof writeWorkspaceFile>>> {
    const session = this.sessions.get(owner, sessionId);
    return session.serialize(async () => {
      if (session.overLimit !== undefined) {
        throw new SandgateError("FILE_TOO_LARGE", `${session.overLimit} (file_write is refused until it is within them)`, {
          data: { path, limit: this.fileLimits.workspaceBytes },
        });
      }
      const written = await writeWorkspaceFile(this.target(session), path, content, encoding, this.fileLimits);
      session.lastUsedAt = Date.now();
      return written;
    });
  }

  listFiles(sessionId: string, path?: string, owner: string = LOCAL_OWNER): Promise<Awaited<ReturnType<typeof listWorkspaceFiles>>> {
    const session = this.sessions.get(owner, sessionId);
    return session.serialize(() => listWorkspaceFiles(this.target(session), path));
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
      ...(scope ? { onUpstreamCall: scope.onUpstreamCall } : {}),
    };
    if (!session) {
      const pooled = sandboxShapeKey(limits) === sandboxShapeKey(this.defaultLimits);
      const sandbox = await this.statelessSandbox(kind, limits, pooled, request);
      try {
        const outcome = await this.runWatched(sandbox, runRequest, request.signal, request.owner ?? LOCAL_OWNER);
        return this.shape(outcome, limits, null, scope, request.owner ?? LOCAL_OWNER);
      } finally {
        this.retire(sandbox, pooled);
      }
    }
    return session.serialize(() => this.runInSession(session, kind, limits, runRequest, request, scope));
  }

  /**
   * A sandbox for one stateless call within the server-wide caps: a warm spare (its lease moves
   * with it) when nobody waits for room, else a lease (waiting fairly) and then a sandbox.
   */
  private async statelessSandbox(kind: RunnerKind, limits: ResolvedLimits, pooled: boolean, request: ExecuteRequest): Promise<Sandbox> {
    const owner = request.owner ?? LOCAL_OWNER;
    if (pooled && !this.admission.queued && !this.admission.atCap(owner)) {
      const spare = this.pool.take(kind);
      if (spare) {
        const uncharge = this.admission.charge(owner);
        void spare.whenClosed().then(uncharge);
        return spare;
      }
    }
    const lease = await this.admission.acquire(limits.memoryMb, owner, request.signal);
    return this.startLeased(lease, () => (pooled ? this.pool.acquire(kind) : startSandbox(this.runtime, { kind, limits })));
  }

  private async startLeased(lease: Lease, start: () => Promise<Sandbox>): Promise<Sandbox> {
    try {
      const sandbox = await start();
      this.holdUntilClosed(lease, sandbox);
      return sandbox;
    } catch (error) {
      lease.release();
      throw error;
    }
  }

  /** The lease ends when the sandbox's processes are gone, however it ends (disposed, crashed, killed). */
  private holdUntilClosed(lease: Lease, sandbox: Sandbox): void {
    void sandbox.whenClosed().then(() => lease.release());
  }

  private async runInSession(
    session: Session,
    kind: RunnerKind,
    limits: ResolvedLimits,
    runRequest: Parameters<Sandbox["run"]>[0],
    request: ExecuteRequest,
    scope: UpstreamCallScope | undefined,
  ): Promise<ExecutionResult> {
    const signal = request.signal;
    session.busy = true;
    try {
      const sandbox = await this.sessionSandbox(session, kind, limits, request);
      const lostToEviction = this.evicted.get(session)?.delete(kind) ?? false;
      const outcome = await this.runWatched(sandbox, runRequest, signal, session.owner).catch((error: unknown) => {
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
      const result = this.shape(outcome, limits, session.id, scope, request.owner ?? LOCAL_OWNER);
      if (outcome.sandboxDied || outcome.result?.resetState || lostToEviction) result.stateReset = true;
      // Whatever the call's status: a call that wrote and then failed or timed out counts too.
      const over = await this.workspaceOverLimit(session, limits);
      session.overLimit = over;
      if (over) {
        const earlier = result.error ? ` (the call itself ended with ${result.error.type}: ${result.error.message})` : "";
        if (result.status === "ok") result.status = "error";
        result.error = { type: "WorkspaceLimit", message: `${over}${earlier}`, traceback: "" };
      }
      return result;
    } finally {
      session.busy = false;
      session.lastUsedAt = Date.now();
      // A call waiting for room may be owed this now idle sandbox (see makeRoomFor).
      const waiting = this.admission.nextWaiting();
      if (waiting !== undefined) this.makeRoomFor(waiting);
    }
  }

  /**
   * Why the session's workspace is over its limits after a call (bytes, directory blocks
   * included, and files plus directories), or undefined when it is within them.
   */
  private async workspaceOverLimit(session: Session, limits: ResolvedLimits): Promise<string | undefined> {
    // Its own filesystem: the kernel already refused every write past the limits (ENOSPC).
    if (session.filesystem) return undefined;
    const inodes = this.config.limits.maxWorkspaceInodes;
    const both = `${Math.round(limits.workspaceBytes / 1048576)} MB and ${inodes} files and directories`;
    try {
      const usage = await workspaceUsage(this.target(session), { workspaceBytes: limits.workspaceBytes, workspaceInodes: inodes });
      if (!usage.over) return undefined;
      const what = usage.inodes > inodes ? `more than ${inodes} files and directories` : `more than ${Math.round(limits.workspaceBytes / 1048576)} MB`;
      return `the workspace holds ${what}; its limits are ${both}; delete files before writing more`;
    } catch {
      return `the workspace could not be measured against its limits (${both}); delete files before writing more`;
    }
  }

  /** The session's sandbox for `kind`; starting one (first use, or after it died) takes a lease of the caps. */
  private async sessionSandbox(session: Session, kind: RunnerKind, limits: ResolvedLimits, request: ExecuteRequest): Promise<Sandbox> {
    if (session.sandboxes.get(kind)?.alive) return this.sessions.sandboxFor(session, kind, limits);
    // Calls to one session run one at a time, so nothing else starts this sandbox meanwhile.
    const lease = await this.admission.acquire(limits.memoryMb, request.owner ?? LOCAL_OWNER, request.signal);
    const sandbox = await this.startLeased(lease, () => this.sessions.sandboxFor(session, kind, limits));
    this.sessionSandboxes.set(sandbox, { session, kind });
    void sandbox.whenClosed().then(() => this.sessionSandboxes.delete(sandbox));
    return sandbox;
  }

  /**
   * Makes room for a waiting call of `owner`. An owner at its share of the sandboxes only gets
   * room from its own sandboxes. Otherwise: a pool spare gives way first; then, at once, the
   * idle session sandbox (least recently used) of the owner holding the most sandboxes, when
   * that owner must give way to `owner` (admission's mustGiveWay); else any session's sandbox
   * idle at least sessions.evictIdleAfterS. A session that loses its sandbox keeps its files;
   * its next call in that language starts a fresh interpreter and says so (state_reset).
   * Running calls are never stopped.
   */
  private makeRoomFor(owner: string): void {
    if (this.admission.atCap(owner)) {
      this.evictIdleSessionSandbox((session) => session.owner === owner);
      return;
    }
    if (this.pool.shrink()) return;
    if (this.evictIdleSessionSandbox((session) => this.admission.mustGiveWay(session.owner, owner), true)) return;
    this.evictIdleSessionSandbox(() => true);
  }

  /**
   * Stops the idle sandbox of a session `eligible` accepts: the one of the owner holding the most
   * sandboxes when `greedyFirst` (then the least recently used of its own; idle any time), else
   * the least recently used idle at least sessions.evictIdleAfterS. False when none qualifies.
   */
  private evictIdleSessionSandbox(eligible: (session: Session) => boolean, greedyFirst = false): boolean {
    const oldestAllowed = greedyFirst ? Infinity : Date.now() - this.config.sessions.evictIdleAfterS * 1000;
    const rank = (session: Session): number => (greedyFirst ? this.admission.heldBy(session.owner) : 0);
    let victim: { sandbox: Sandbox; session: Session; kind: RunnerKind } | undefined;
    for (const [sandbox, { session, kind }] of this.sessionSandboxes) {
      if (session.busy || session.sandboxes.get(kind) !== sandbox || session.lastUsedAt > oldestAllowed || !eligible(session)) continue;
      const better =
        !victim ||
        rank(session) > rank(victim.session) ||
        (rank(session) === rank(victim.session) && session.lastUsedAt < victim.session.lastUsedAt);
      if (better) victim = { sandbox, session, kind };
    }
    if (!victim) return false;
    victim.session.sandboxes.delete(victim.kind);
    this.sessionSandboxes.delete(victim.sandbox);
    const kinds = this.evicted.get(victim.session) ?? new Set<RunnerKind>();
    kinds.add(victim.kind);
    this.evicted.set(victim.session, kinds);
    this.retire(victim.sandbox);
    return true;
  }

  /**
   * Seconds until room is expected for `owner` (the Retry-After of a refusal): the soonest a
   * running call is expected to end (its deadline, or the queue wait if sooner: it may end any
   * time), plus, for a session's sandbox that will not give way at once, the idle time before
   * eviction; or an idle session sandbox becomes evictable. Only `owner`'s own count when it is
   * at its share. Undefined when nothing is known to free up.
   */
  private expectedWaitS(owner: string): number | undefined {
    const now = Date.now();
    const evictMs = this.config.sessions.evictIdleAfterS * 1000;
    const capped = this.admission.atCap(owner);
    const givesWayAtOnce = (other: string): boolean => !capped && this.admission.mustGiveWay(other, owner);
    let soonest = Infinity;
    for (const [sandbox, { owner: holder, deadline }] of this.running) {
      if (capped && holder !== owner) continue;
      const stays = this.sessionSandboxes.has(sandbox) && !givesWayAtOnce(holder);
      soonest = Math.min(soonest, Math.min(deadline, now + this.config.limits.queueWaitS * 1000) + (stays ? evictMs : 0));
    }
    for (const [sandbox, { session }] of this.sessionSandboxes) {
      if (this.running.has(sandbox) || (capped && session.owner !== owner)) continue;
      soonest = Math.min(soonest, givesWayAtOnce(session.owner) ? now : session.lastUsedAt + evictMs);
    }
    return soonest === Infinity ? undefined : Math.max(1, Math.ceil((soonest - now) / 1000));
  }

  private async runWatched(sandbox: Sandbox, runRequest: Parameters<Sandbox["run"]>[0], signal: AbortSignal | undefined, owner: string): Promise<RunOutcome> {
    if (signal?.aborted) sandbox.terminate("killed");
    const onAbort = (): void => sandbox.terminate("killed");
    signal?.addEventListener("abort", onAbort, { once: true });
    this.running.set(sandbox, { owner, deadline: Date.now() + runRequest.timeoutMs });
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
    scope: UpstreamCallScope | undefined,
    owner: string,
  ): ExecutionResult {
    const saved = this.outputs.begin(owner);
    const save = (stream: SavedStream, data: Buffer): SavedRef | undefined => {
      const kept = saved.add(stream, data);
      return kept && { uri: kept.uri, restPath: savedOutputRestPath(kept.id, stream) };
    };
    const stdout = this.shapeStdout(outcome.stdout, limits, () => save("stdout", outcome.stdout));
    const stderr = shapeOutput(outcome.stderr, limits.displayBytes, () => save("stderr", outcome.stderr));
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
    if (stdout.fullOutput || stderr.fullOutput) {
      result.fullOutput = {
        ...(stdout.fullOutput ? { stdout: stdout.fullOutput } : {}),
        ...(stderr.fullOutput ? { stderr: stderr.fullOutput } : {}),
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
    if (nestedDeeperThan(value, MAX_VALUE_DEPTH)) {
      // Only a hand-made result frame gets here (the runners' own JSON stops far earlier); every
      // recursive step after this one (shaping, JSON for the wire, the text for the model) would overflow.
      value = `[a value nested more than ${MAX_VALUE_DEPTH} levels deep, not shown]`;
      result.truncated = true;
    }
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
  private shapeStdout(data: Buffer, limits: ResolvedLimits, save: () => SavedRef | undefined): ShapedStream & { tokens: number; shownTokens: number; note?: string } {
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
      const saved = save();
      const note = `${shaped.note ?? "output shortened"}; ${savedText(saved, data.length)}`;
      return { text: shaped.text, truncated: true, ...(saved ? { fullOutput: saved.uri } : {}), totalBytes: data.length, tokens, shownTokens: shaped.tokens, note };
    }
    const cut = shapeOutput(data, limits.displayBytes, save);
    return { ...cut, tokens, shownTokens: countTokens(cut.text) };
  }

  /**
   * A saved full output (result.fullOutput names it), for the caller it belongs to; unknown,
   * expired and other callers' ids are OUTPUT_NOT_FOUND alike.
   */
  readSavedOutput(id: string, stream: SavedStream, owner: string = LOCAL_OWNER): Promise<Buffer> {
    return this.outputs.read(id, stream, owner);
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
    this.admission.close();
    for (const sandbox of this.running.keys()) sandbox.terminate("killed");
    const helpers = [...this.fileHelpers.values()].map((helper) => helper.close());
    this.fileHelpers.clear();
    await Promise.all([this.pool.close(), this.sessions.close(), ...helpers]);
    while (this.retiring.size > 0) await Promise.all([...this.retiring]);
    await this.outputs.close();
    await removeIdleCgroups();
    this.forgetHostPaths();
  }
}
