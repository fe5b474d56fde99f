// The execution engine: validates a request, picks a sandbox (a warm spare or a fresh one for
// stateless calls, the session's own otherwise), runs the code and returns the built result.

import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import type { SandgateConfig } from "../config/index.js";
import { registerHostPaths, SandgateError } from "../errors/index.js";
import {
  prepareRuntime,
  resolveLimits,
  sandboxShapeKey,
  startSandbox,
  WarmPool,
  type PoolKindState,
  type ResolvedLimits,
  type RunnerKind,
  type RunOutcome,
  type Sandbox,
  type SandboxRuntime,
  type SecretValue,
} from "../sandbox/index.js";
import { silentLogger, type Logger } from "../util/logger.js";
import { SavedOutputs, type SavedStream } from "./saved-outputs.js";
import { CallOutputs } from "./call-outputs.js";
import { spillBounds } from "./long-output.js";
import type { ExecutionContext, OutputGuard, SandboxOperations, UpstreamCallScope } from "./upstream-call-scope.js";
import { OutputBoundary } from "./output-boundary.js";
import { LANGUAGE_SPECS, prepareCode, resolveLanguage, warmCodePreparation, type Language } from "../languages/index.js";
import { commandToBash } from "./command.js";
import { checkRequest, type ExecuteRequest } from "./request.js";
import { warmTokenizer } from "./tokens.js";
import { LOCAL_OWNER, SessionManager } from "./sessions.js";
import type { Session } from "./session.js";
import { EngineSessions } from "./engine-sessions.js";
import { EngineFiles } from "./engine-files.js";
import { buildResult, markWorkspaceOverLimit, preparationFailedResult, type ExecutionResult, type SaveOutput } from "./result-builder.js";
import { Eviction } from "./eviction.js";
import { callRunEnv, maskToolCalls, sessionRunEnv } from "./env-vars.js";
import { Admission, defaultSandboxesPerOwner, type AdmissionState, type Lease } from "./admission.js";
import { EngineJobs, type JobInfo } from "./jobs.js";
import type { EngineHooks, RunContext, RunHooks, RunVerdict } from "./hooks.js";

/**
 * How long a session's runner has, after a timeout or cancel interrupted its code (SIGINT:
 * KeyboardInterrupt in Python, an interrupted script in JavaScript), to end the call itself and
 * keep the session's state; a runner still busy then is killed and the next result says state_reset.
 */
export const INTERRUPT_GRACE_MS = 2000;

/** Code mode as the engine sees it: a read-only tree to mount and an upstream-call scope per run. */
export interface ToolProvider {
  toolsDir: string;
  beginExecution(context: ExecutionContext): UpstreamCallScope;
  /** What guards text leaving `owner`'s session for the agent (file reads), if anything needs guarding. */
  guardFor?(owner: string, sessionId: string): OutputGuard | undefined;
  /** The session ended: what code mode keeps for it (its PII vault) goes with it. */
  sessionEnded?(owner: string, sessionId: string): void;
  /** Its own operations code may call (search_tools, list_servers), for an engine built without EngineOptions.operations. */
  readonly operations?: SandboxOperations;
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
  /**
   * What judges, admits and records each run and records each file operation (governance's, see
   * Governance.engineHooks); without them code runs unjudged and unrecorded (library use, tests).
   */
  hooks?: EngineHooks;
  /**
   * A Governance, as library users passed it before the hooks existed: its engineHooks() are used
   * when `hooks` is not given. Typed by what the engine uses of it, so the core knows no feature.
   */
  governance?: { engineHooks(): EngineHooks };
  /** Overrides INTERRUPT_GRACE_MS (tests that prove a stubborn runner is killed, in less time). */
  interruptGraceMs?: number;
  /** Sandgate's operations that sandboxed code may call (search_tools, list_servers); without, such calls fail with ToolNotFound. */
  operations?: SandboxOperations;
}

export class Engine {
  /** Starting, listing and stopping sessions. */
  readonly sessions: EngineSessions;
  /** Reading, writing and listing sessions' workspace files. */
  readonly files: EngineFiles;
  /** Background jobs: calls that return a job id at once and are polled, followed or stopped. */
  readonly jobs: EngineJobs;
  private readonly sessionManager: SessionManager;
  /** Full outputs too long to show, kept for config.outputTtlS within config.limits.savedOutputsMb. */
  readonly outputs: SavedOutputs;
  private readonly admission: Admission;
  private readonly forgetHostPaths: () => void;
  /** Session sandboxes and running calls: who gives way when the server is full. */
  private readonly eviction: Eviction;
  private readonly pool: WarmPool;
  private readonly defaultLimits: ResolvedLimits;
  private readonly retiring = new Set<Promise<void>>();
  private closing = false;
  /** Calls of execute() under way (settling, never rejecting). */
  private readonly calls = new Set<Promise<void>>();
  /** Judging, admitting and recording each run, when the engine was given them. */
  private readonly gate: RunHooks | undefined;

  private constructor(
    readonly config: SandgateConfig,
    readonly runtime: SandboxRuntime,
    log: Logger,
    poolSizes: Record<RunnerKind, number>,
    private readonly tools: ToolProvider | undefined,
    hooks: EngineHooks,
    private readonly interruptGraceMs: number,
    /** Sandgate's operations sandboxed code may call, when the engine was given them. */
    private readonly operations: SandboxOperations | undefined,
  ) {
    this.defaultLimits = resolveLimits(config);
    this.gate = hooks.runs;
    this.outputs = new SavedOutputs({ dir: runtime.outputsDir, ttlMs: config.outputTtlS * 1000, capBytes: config.limits.savedOutputsMb * 1048576, log });
    this.admission = new Admission({
      maxSandboxes: config.limits.maxSandboxes,
      maxCommittedMb: config.limits.maxCommittedMemoryMb,
      waitMs: config.limits.queueWaitS * 1000,
      maxPerOwner: config.limits.maxSandboxesPerIdentity ?? defaultSandboxesPerOwner(config.limits.maxSandboxes),
      expectedWaitS: (owner) => this.eviction.expectedWaitS(owner),
    });
    this.pool = new WarmPool(runtime, poolSizes, this.defaultLimits, log, this.admission);
    this.eviction = new Eviction({
      admission: this.admission,
      shrinkPool: () => this.pool.shrink(),
      retire: (sandbox) => this.retire(sandbox),
      evictIdleAfterMs: config.sessions.evictIdleAfterS * 1000,
    });
    // Spares give way to waiting callers, and come back once room is free and nobody waits.
    this.admission.onPressure((owner) => this.eviction.makeRoomFor(owner));
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
    this.sessionManager = new SessionManager(runtime, {
      max: config.sessions.max,
      maxPerOwner: config.sessions.maxPerIdentity,
      idleTtlMs: config.sessions.idleTtlS * 1000,
      evictIdleAfterMs: config.sessions.evictIdleAfterS * 1000,
      limits: this.defaultLimits,
      workspaceInodes: config.limits.maxWorkspaceInodes,
      workspaceFilesystem: config.sessions.workspaceFilesystem,
      // The file helper works in the workspace: it goes before the workspace is unmounted.
      onEnd: (session) => {
        this.jobs.sessionEnded(session, this.sessionManager.endedReason(session.owner, session.id) ?? "stopped");
        this.tools?.sessionEnded?.(session.owner, session.id);
        return this.files.forget(session);
      },
      log,
    });
    this.files = new EngineFiles(runtime, this.sessionManager, {
      maxFileBytes: this.defaultLimits.fileSizeBytes,
      workspaceBytes: this.defaultLimits.workspaceBytes,
      workspaceInodes: config.limits.maxWorkspaceInodes,
    }, hooks.files, tools?.guardFor ? (owner, id) => tools.guardFor?.(owner, id) : undefined);
    this.sessions = new EngineSessions(this.sessionManager, () => this.assertOpen(), this.files);
    this.jobs = new EngineJobs(
      {
        validate: (request) => {
          this.validate("command" in request ? this.commandAsCode(request) : request);
          // A job in a session nobody started fails now, not once it runs.
          if (request.sessionId !== undefined) this.sessionManager.get(request.owner ?? LOCAL_OWNER, request.sessionId);
        },
        screen: (request) => this.screen("command" in request ? this.commandAsCode(request) : request, true, "command" in request ? request.command : undefined, true),
        run: (request, signal, onOutput, screened) =>
          this.run({ ...("command" in request ? this.commandAsCode(request) : request), signal, onOutput }, true, "command" in request ? request.command : undefined, screened),
        sessionEnded: (owner, id) => this.sessionManager.endedReason(owner, id),
      },
      {
        max: config.jobs.max,
        maxPerOwner: config.jobs.maxPerIdentity,
        keepFinishedMs: config.jobs.keepFinishedS * 1000,
        defaultTimeoutS: config.limits.maxExecutionTimeS,
        displayChars: config.limits.maxOutputSize,
        // A window per stream, so that polling a busy job rarely misses text; the whole output is saved with the result.
        windowChars: Math.max(1024 * 1024, 4 * config.limits.maxOutputSize),
        log,
      },
      () => this.assertOpen(),
    );
    // Probed once, at start: whether each workspace gets its own filesystem.
    void this.sessionManager.filesystems.state();
  }

  /**
   * Prepares the sandbox runtime (throws SANDBOX_UNAVAILABLE when isolation is impossible), fills
   * the pool, and loads what calls use on the host (the tokenizer every result is counted with, the
   * parsers code is prepared with).
   */
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
    const hooks = options.hooks ?? options.governance?.engineHooks() ?? {};
    const operations = options.operations ?? options.tools?.operations;
    let engine: Engine;
    try {
      engine = new Engine(config, runtime, options.log ?? silentLogger, options.pool ?? config.pool, options.tools, hooks, options.interruptGraceMs ?? INTERRUPT_GRACE_MS, operations);
    } catch (error) {
      // Nothing of the runtime outlives an engine that could not be built: its cgroups' count and its view.
      void runtime.closeCgroups();
      runtime.view.close();
      throw error;
    }
    engine.pool.fill();
    // The tokenizer's tables take a few hundred ms to parse, which the first call paid (the warm
    // pool's p95 in `npm run bench`); here they load while the spares just spawned start up beside it.
    warmTokenizer();
    warmCodePreparation();
    return engine;
  }

  poolState(): Record<RunnerKind, PoolKindState> {
    return this.pool.state();
  }

  /** Live sandboxes and committed memory against the server-wide caps, and calls waiting for room. */
  admissionState(): AdmissionState {
    return this.admission.state();
  }

  /** Runs a shell line with bash (pipes, redirections) in a subshell of the session's shell. */
  async executeCommand(request: CommandRequest): Promise<ExecutionResult> {
    return this.run(this.commandAsCode(request), false, request.command);
  }

  /** The bash request that runs `request`'s shell line. */
  private commandAsCode<R extends Omit<CommandRequest, "signal" | "onOutput">>(request: R): Omit<R, "command" | "workingDirectory"> & ExecuteRequest {
    if (request.command.includes("\u0000")) throw new SandgateError("INVALID_INPUT", "command must not contain NUL bytes", { data: { field: "command" } });
    if (request.workingDirectory?.includes("\u0000")) {
      throw new SandgateError("INVALID_INPUT", "working_directory must not contain NUL bytes", { data: { field: "working_directory" } });
    }
    const { command, workingDirectory, ...rest } = request;
    return { ...rest, language: "bash", code: commandToBash(command, workingDirectory) };
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
    if (request.sessionEnv !== undefined && request.sessionId === undefined) {
      throw new SandgateError("INVALID_INPUT", "session_env sets a session's variables and needs a session_id; use env for one call", { data: { field: "session_env" } });
    }
    return { language, limits };
  }

  /** Runs code. Rejects only for bad input or a sandbox that cannot start; code failures are results. */
  async execute(request: ExecuteRequest): Promise<ExecutionResult> {
    const running = this.run(request, false);
    // close() waits for calls under way to finish, so their last events (a killed run) are recorded before the audit log closes.
    const settled = running.then(() => undefined, () => undefined);
    this.calls.add(settled);
    void settled.then(() => this.calls.delete(settled));
    return running;
  }

  /**
   * The gate's verdict on a call before it runs: POLICY_BLOCKED, or (unless `blockOnly`, for a job
   * about to be started) a human's approval. Undefined when the engine has no run hooks (no governance, or security switched off).
   * `original` is a shell line's text, analysed instead of the bash that wraps it.
   */
  async screen(request: ExecuteRequest, background: boolean, original?: string, blockOnly = false, checked?: Language): Promise<RunVerdict | undefined> {
    const gate = this.gate;
    if (!gate) return undefined;
    const language = checked ?? this.checked(request).language;
    const verdict = await gate.judge(gateContext(request, language, background, original));
    await gate.admit(verdict, blockOnly);
    return verdict;
  }

  /**
   * Runs a call, or a background job's call (`job`: it waits for its session's turn however long that
   * takes), through the gate (a job's verdict may come from its start); the execution is recorded however it ends.
   */
  private async run(request: ExecuteRequest, job: boolean, original?: string, screened?: RunVerdict): Promise<ExecutionResult> {
    // Settles once the call is over, result recorded and all: only then may the warm pool start the
    // spare that replaces the one the call used (see WarmPool.release).
    let answer = (): void => undefined;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    try {
      return await this.runGated(request, job, answered, original, screened);
    } finally {
      answer();
    }
  }

  /** run() itself: the call through the gate when there is one. */
  private async runGated(request: ExecuteRequest, job: boolean, answered: Promise<void>, original?: string, screened?: RunVerdict): Promise<ExecutionResult> {
    if (!this.gate) return this.runChecked(request, job, randomUUID(), answered);
    // Checked once for the gate and the run: the schema parse is a fair part of a small call's cost.
    const checked = this.checked(request);
    if (!screened && request.sessionId === undefined) return this.runStateless(this.gate, request, job, checked, answered, original);
    let verdict = screened;
    if (verdict) {
      // A job screened at its start: the signal and approver are the job's own now.
      verdict.context.signal = request.signal;
      await this.gate.admit(verdict);
    } else {
      verdict = await this.screen(request, job, original, false, checked.language);
    }
    if (!verdict) return this.runChecked(request, job, randomUUID(), answered, checked);
    await this.gate.roomToRecord();
    const started = performance.now();
    let result: ExecutionResult;
    try {
      result = await this.runChecked(request, job, verdict.context.executionId, answered, checked);
    } catch (error) {
      await this.gate.recordRun(verdict, performance.now() - started, undefined, error);
      throw error;
    }
    result.security = verdict.security;
    result.executionId = verdict.context.executionId;
    await this.gate.recordRun(verdict, performance.now() - started, result);
    return result;
  }

  /**
   * A gated stateless call: the code is judged while its sandbox is fetched (see gatedSandbox), and
   * runs only once the gate let it through; the execution is recorded however it ends.
   */
  private async runStateless(gate: RunHooks, request: ExecuteRequest, job: boolean, checked: ReturnType<Engine["checked"]>, answered: Promise<void>, original?: string): Promise<ExecutionResult> {
    const context = gateContext(request, checked.language, job, original);
    let passed: RunVerdict | undefined;
    let passing: Promise<void> | undefined;
    const judged = gate.judge(context);
    // Settled below in every path; this only keeps a rejection from counting as unhandled meanwhile.
    judged.catch(() => undefined);
    const permit: Permit = {
      judged,
      // Once per call: a refusal is recorded once, and asking again gives the same answer.
      pass: (verdict) =>
        (passing ??= (async () => {
          await gate.admit(verdict);
          await gate.roomToRecord();
          passed = verdict;
        })()),
    };
    const started = performance.now();
    let result: ExecutionResult;
    try {
      result = await this.runChecked(request, job, context.executionId, answered, checked, permit);
    } catch (error) {
      // Failed before the gate's answer (the sandbox could not start): the answer comes first, as if it had been awaited first.
      if (!passed) await permit.pass(await judged);
      await gate.recordRun(passed as RunVerdict, performance.now() - started, undefined, error);
      throw error;
    }
    // Ended without a sandbox (code that does not compile): judged and recorded all the same.
    if (!passed) await permit.pass(await judged);
    const verdict = passed as RunVerdict;
    result.security = verdict.security;
    result.executionId = verdict.context.executionId;
    await gate.recordRun(verdict, performance.now() - started, result);
    return result;
  }

  /**
   * The sandbox of a gated stateless call. A ready spare is taken at once, so it is taken only once the
   * code passed the gate. Otherwise the sandbox is started (or waited for) while the code is analysed,
   * and used only once the code passed: blocked code gets its answer without waiting for the sandbox,
   * and code waiting for a human's approval holds no sandbox meanwhile (a new one is fetched after).
   */
  private async gatedSandbox(kind: RunnerKind, limits: ResolvedLimits, pooled: boolean, owner: string, signal: AbortSignal | undefined, permit: Permit): Promise<Sandbox> {
    const fetch = (during?: AbortSignal): Promise<Sandbox> => this.statelessSandbox(kind, limits, pooled, owner, during);
    if (pooled && this.pool.hasReady(kind) && !this.admission.queued) {
      await permit.pass(await permit.judged);
      return fetch(signal);
    }
    const giveUp = new AbortController();
    const fetching = fetch(signal ? AbortSignal.any([signal, giveUp.signal]) : giveUp.signal);
    fetching.catch(() => undefined);
    const dropFetch = (): void => {
      giveUp.abort();
      void fetching.then((sandbox) => this.retire(sandbox, pooled), () => undefined);
    };
    let verdict: RunVerdict;
    try {
      verdict = await permit.judged;
    } catch (error) {
      dropFetch();
      throw error;
    }
    if (verdict.heldAtAdmit) {
      dropFetch();
      await permit.pass(verdict);
      return fetch(signal);
    }
    await permit.pass(verdict).catch((error: unknown) => {
      dropFetch();
      throw error;
    });
    return fetching;
  }

  /** `answered` settles once the caller has its answer (see run()). */
  private async runChecked(request: ExecuteRequest, job: boolean, executionId: string, answered: Promise<void>, checked = this.checked(request), permit?: Permit): Promise<ExecutionResult> {
    const { language, limits } = checked;
    const owner = request.owner ?? LOCAL_OWNER;
    const session = request.sessionId === undefined ? undefined : this.sessionManager.get(owner, request.sessionId);
    const prepared = prepareCode(language, request.code);
    if (!prepared.ok) return preparationFailedResult(prepared.error, session?.id ?? null);
    const context: ExecutionContext = {
      executionId,
      owner,
      sessionId: session?.id ?? null,
      ...(session ? { sessionOwner: session.owner } : {}),
      ...(request.approver ? { approver: request.approver } : {}),
      ...(request.onWaiting ? { onWaiting: request.onWaiting } : {}),
    };
    const scope = this.tools?.beginExecution(context);
    const boundary = scope?.guard ? new OutputBoundary(scope.guard) : undefined;
    const { kind, code, filename, mode, source } = prepared.prepared;
    // Saved outputs are the caller's (the holder of a shared session id reads its own, not the creator).
    const saved = new CallOutputs(this.outputs.begin(owner));
    const runRequest = {
      code,
      filename,
      ...(mode ? { mode } : {}),
      ...(source !== undefined ? { source } : {}),
      timeoutMs: limits.timeoutMs,
      // One second of slack: CPU time must never beat the wall clock to a plain busy loop.
      cpuSeconds: Math.ceil((limits.timeoutMs / 1000) * limits.cpus) + 1,
      outputCapBytes: limits.outputCapBytes,
      // A long stream is saved as it is printed, only its ends kept in memory; not where PII is
      // tokenized already (a session's known values), which scans each stream whole (OutputBoundary.outcome).
      ...(boundary?.active ? {} : { spill: saved.spill(spillBounds(this.config.codeMode.outputTokenBudget, limits.displayBytes)) }),
      ...(request.onOutput ? { onOutput: boundary ? boundary.stream(request.onOutput) : request.onOutput } : {}),
      ...(scope ? { onUpstreamCall: scope.onUpstreamCall } : {}),
      ...(this.operations ? { onOperation: this.operations.handlerFor(context) } : {}),
      // A session call's variables are taken in its turn (runInSession): session_env may change them.
      ...(session ? {} : callRunEnv(request.env)),
      images: { maxBytes: this.config.limits.maxImageBytes, maxCount: this.config.limits.maxImagesPerCall },
      ...(request.keepProcesses ? { keepProcesses: true } : {}),
    };
    if (!session) {
      const pooled = sandboxShapeKey(limits) === sandboxShapeKey(this.defaultLimits);
      const sandbox = permit ? await this.gatedSandbox(kind, limits, pooled, owner, request.signal, permit) : await this.statelessSandbox(kind, limits, pooled, owner, request.signal);
      try {
        const outcome = await this.runWatched(sandbox, runRequest, request.signal, owner);
        return await this.result(outcome, limits, null, scope, saved, runRequest.secrets, boundary);
      } finally {
        saved.release();
        this.retire(sandbox, pooled, answered);
      }
    }
    return this.inTurn(session, kind, job, request.owner ?? LOCAL_OWNER, request.signal, () => this.runInSession(session, kind, limits, runRequest, request, scope, saved, boundary)).finally(() => saved.release());
  }

  /**
   * Runs `task` in the turn of the session's `kind` runner. A call (not a job) that a background
   * job of that runner is running or waiting ahead of gets SESSION_BUSY at once, naming the job:
   * it could only wait out the job's whole time. Calls in other runners and file operations do not
   * wait for it. One cancelled (`signal`) while it waits leaves at once (a stopped job must not
   * wait for the call ahead).
   */
  private inTurn<T>(session: Session, kind: RunnerKind, job: boolean, caller: string, signal: AbortSignal | undefined, task: () => Promise<T>): Promise<T> {
    if (!job) {
      const blocking = this.jobs.runningIn(session, (jobKind) => runnerOfJob(jobKind) === kind);
      if (blocking) return Promise.reject(sessionBusy(session.id, kind, blocking, blocking.owner === caller));
    }
    let state: "waiting" | "started" | "gave up" = "waiting";
    const queued = session.serialize(kind, async () => {
      if (state === "gave up") throw new SandgateError("SESSION_BUSY", "the call gave up waiting for its session");
      state = "started";
      return task();
    });
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        if (state !== "waiting") return;
        state = "gave up";
        // What the call would have said once its turn came (runWatched).
        reject(new SandgateError("SANDBOX_FAILED", "the call was cancelled before the code could run"));
      };
      queued
        .then(resolve, reject)
        .finally(() => signal?.removeEventListener("abort", onAbort))
        .catch(() => undefined);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * A sandbox for one stateless call within the server-wide caps: a warm spare (its lease moves
   * with it) when nobody waits for room, else a lease (waiting fairly) and then a sandbox.
   */
  private async statelessSandbox(kind: RunnerKind, limits: ResolvedLimits, pooled: boolean, owner: string, signal: AbortSignal | undefined): Promise<Sandbox> {
    if (pooled && !this.admission.queued && !this.admission.atCap(owner)) {
      const spare = this.pool.take(kind);
      if (spare) {
        const uncharge = this.admission.charge(owner);
        void spare.whenClosed().then(uncharge);
        return spare;
      }
    }
    const lease = await this.admission.acquire(limits.memoryMb, owner, signal);
    return this.startLeased(lease, () => (pooled ? this.pool.acquire(kind) : startSandbox(this.runtime, { kind, limits, oneCall: true })));
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
    saved: CallOutputs,
    boundary?: OutputBoundary,
  ): Promise<ExecutionResult> {
    // The session's variables as of this call's turn, the call's own on top; results mask every
    // secret the session was given. A restarted sandbox gets them too: the runner sets them per call.
    runRequest = { ...runRequest, ...sessionRunEnv(session.env, request.env, request.sessionEnv) };
    // A timeout or cancel interrupts the code first, so the session's state survives it.
    runRequest = { ...runRequest, interruptGraceMs: this.interruptGraceMs };
    session.beginCall();
    try {
      // A resident sandbox that died while idle took the session's state with it, unseen so far.
      const idle = session.sandbox(kind);
      if (idle && !idle.alive) session.stateLost(kind);
      const sandbox = await this.sessionSandbox(session, kind, limits, request.signal);
      const lostUnseen = session.takeStateLost(kind);
      const outcome = await this.runWatched(sandbox, runRequest, request.signal, session.owner).catch((error: unknown) => {
        // Cancelled while the sandbox was starting: it was killed before the code ran, and a dead
        // sandbox must not stay the session's runner.
        if (!sandbox.alive) {
          session.dropSandbox(kind, sandbox);
          this.retire(sandbox);
        }
        throw error;
      });
      session.countCall();
      // A runner that reports its state reset (a Bash `exit`) is ending: the next call needs a new one.
      const ended = outcome.sandboxDied || outcome.result?.resetState === true;
      if (ended) {
        session.dropSandbox(kind, sandbox);
        this.retire(sandbox);
      }
      const result = await this.result(outcome, limits, session.id, scope, saved, runRequest.secrets, boundary);
      if (ended || lostUnseen) result.stateReset = true;
      // A cancelled caller never sees this result: the next call in `kind` says state_reset instead.
      if (result.stateReset && request.signal?.aborted) session.stateLost(kind);
      // Whatever the call's status: a call that wrote and then failed or timed out counts too.
      const over = await this.files.overLimit(session, limits.workspaceBytes);
      session.setOverLimit(over);
      if (over) markWorkspaceOverLimit(result, over);
      return result;
    } finally {
      session.endCall();
      // A machine whose last runner ended in this call (a Bash `exit`, a crash) goes with it.
      await this.sessionManager.settle(session);
      // A call waiting for room may be owed this now idle sandbox (see Eviction.makeRoomFor).
      const waiting = this.admission.nextWaiting();
      if (waiting !== undefined) this.eviction.makeRoomFor(waiting);
    }
  }

  /** The session's sandbox for `kind`; starting one (first use, or after it died) takes a lease of the caps. */
  private async sessionSandbox(session: Session, kind: RunnerKind, limits: ResolvedLimits, signal: AbortSignal | undefined): Promise<Sandbox> {
    if (session.sandbox(kind)?.alive) return this.sessionManager.sandboxFor(session, kind, limits);
    // Calls to one session run one at a time, so nothing else starts this sandbox meanwhile.
    const lease = await this.admission.acquire(limits.memoryMb, session.owner, signal);
    const sandbox = await this.startLeased(lease, () => this.sessionManager.sandboxFor(session, kind, limits));
    this.eviction.holdForSession(sandbox, session, kind);
    return sandbox;
  }

  private async runWatched(sandbox: Sandbox, runRequest: Parameters<Sandbox["run"]>[0], signal: AbortSignal | undefined, owner: string): Promise<RunOutcome> {
    // Cancelled before the code ran: nothing to stop, and a session's sandbox keeps its state.
    if (signal?.aborted) throw new SandgateError("SANDBOX_FAILED", "the call was cancelled before the code could run");
    const onAbort = (): void => sandbox.stopRun("killed");
    signal?.addEventListener("abort", onAbort, { once: true });
    const ended = this.eviction.markRunning(sandbox, owner, Date.now() + runRequest.timeoutMs);
    try {
      if (!sandbox.alive) throw new SandgateError("SANDBOX_FAILED", "the sandbox stopped before the code could run");
      return await sandbox.run(runRequest);
    } finally {
      ended();
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /**
   * The result callers see of `outcome` (the sandbox masked `secrets` in it; here in the tool calls
   * too; `boundary` tokenizes PII before anything is shaped or saved); full outputs too long to show are saved in `saved`.
   */
  private async result(
    outcome: RunOutcome,
    limits: ResolvedLimits,
    sessionId: string | null,
    scope: UpstreamCallScope | undefined,
    saved: CallOutputs,
    secrets?: readonly SecretValue[],
    boundary?: OutputBoundary,
  ): Promise<ExecutionResult> {
    // A spilled stream's copy is complete (or given up) before the result names it.
    await saved.written();
    // Tokenization that began during the call (a tool result) scans every stream whole: a spilled
    // one is read back, and saved again tokenized over its raw copy.
    if (boundary?.active) outcome = await saved.readBack(outcome);
    if (boundary) outcome = await boundary.outcome(outcome);
    const save: SaveOutput = (stream, data) => saved.save(stream, data);
    const summary = scope?.finish();
    const toolCalls = maskToolCalls(boundary ? boundary.summary(summary) : summary, secrets);
    const result = await buildResult(outcome, {
      displayBytes: limits.displayBytes,
      outputTokenBudget: this.config.codeMode.outputTokenBudget,
      sessionId,
      ...(toolCalls ? { toolCalls } : {}),
      save,
    });
    const pii = boundary?.counts();
    if (pii) result.pii = pii;
    return result;
  }

  /**
   * A saved full output (result.fullOutput names it), for the caller it belongs to; unknown,
   * expired and other callers' ids are OUTPUT_NOT_FOUND alike.
   */
  readSavedOutput(id: string, stream: SavedStream, owner: string = LOCAL_OWNER): Promise<Buffer> {
    return this.outputs.read(id, stream, owner);
  }

  /** Destroys a used sandbox in the background (a pooled one is replaced once `answered` settles); close() waits for every one. */
  private retire(sandbox: Sandbox, pooled = false, answered?: Promise<void>): void {
    const done = (pooled ? this.pool.release(sandbox, answered) : sandbox.dispose()).finally(() => this.retiring.delete(done));
    this.retiring.add(done);
  }

  private assertOpen(): void {
    if (this.closing) throw new SandgateError("SHUTTING_DOWN", "sandgate is shutting down");
  }

  /** Stops every session, pooled and running sandbox, and waits until all their processes are gone. */
  async close(): Promise<void> {
    this.closing = true;
    const jobsStopped = this.jobs.close();
    this.admission.close();
    for (const sandbox of this.eviction.busySandboxes) sandbox.terminate("killed");
    await Promise.all([this.pool.close(), this.sessionManager.close(), this.files.close()]);
    await jobsStopped;
    // Their sandboxes are gone: what is left of each call is recording its result (bounded: a call stuck elsewhere does not hold up the stop).
    await Promise.race([Promise.all([...this.calls]), new Promise((resolve) => setTimeout(resolve, CALLS_SETTLE_MS).unref())]);
    while (this.retiring.size > 0) await Promise.all([...this.retiring]);
    await this.outputs.close();
    await this.runtime.closeCgroups();
    this.forgetHostPaths();
    this.runtime.view.close();
  }
}

/** The longest close() waits for calls under way to record their end once their sandboxes are gone. */
const CALLS_SETTLE_MS = 5000;

/** The gate's answer on a stateless call, judged while its sandbox is fetched: `pass` throws a refusal, else the code may run. */
interface Permit {
  judged: Promise<RunVerdict>;
  /** The same promise however often it is called. */
  pass(verdict: RunVerdict): Promise<void>;
}

/** Who runs what, for the gate; `original` is a shell line's text, analysed instead of the bash that wraps it. */
function gateContext(request: ExecuteRequest, language: Language, background: boolean, original?: string): RunContext {
  return {
    language,
    code: original ?? request.code,
    owner: request.owner ?? LOCAL_OWNER,
    sessionId: request.sessionId ?? null,
    executionId: randomUUID(),
    background,
    approver: request.approver,
    signal: request.signal,
    onWaiting: request.onWaiting,
  };
}

/** The runner a job of `kind` (a language, or "command" for a shell line) runs in. */
function runnerOfJob(kind: string): RunnerKind | undefined {
  if (kind === "command") return "bash";
  const language = resolveLanguage(kind);
  return language === undefined ? undefined : LANGUAGE_SPECS[language].runner;
}

/** The refusal of a call whose runner a background job holds: what holds it, and what to do now. */
function sessionBusy(sessionId: string, kind: RunnerKind, job: JobInfo, own: boolean): SandgateError {
  const ranS = Math.max(0, Math.round((Date.now() - Date.parse(job.startedAt)) / 1000));
  // Another holder's job in a shared session: only its caller can read or stop it.
  const whatToDo = own
    ? `wait for the job with get_job (REST: GET /jobs/${job.id}), stop it with stop_job (REST: DELETE /jobs/${job.id}), or run this in another session. `
    : `it is another caller's job in this shared session, so wait until it ends (up to ${Math.max(1, job.timeoutS - ranS)} s) or run this in another session. `;
  return new SandgateError(
    "SESSION_BUSY",
    `session ${sessionId} is running background job ${job.id} in its ${kind} runner (for ${ranS} s, limit ${job.timeoutS} s), so this call cannot run there now; ` +
      whatToDo +
      `The session's files can be read and written meanwhile, and calls in its other languages run.`,
    { data: { sessionId, jobId: job.id, retry_after: Math.max(1, job.timeoutS - ranS) } },
  );
}
