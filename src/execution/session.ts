// One session's state: its resident sandboxes, call count and last use, the calls running, the
// workspace's limits check, and a queue per runner that runs that runner's calls one at a time.

import type { RunnerKind, Sandbox, SessionMachine } from "../sandbox/index.js";
import { SessionEnv } from "./env-vars.js";

/**
 * One session's state. Only its own methods change it: the engine marks calls, drops dead or
 * evicted sandboxes and records the workspace check; the manager adopts started sandboxes.
 */
export class Session {
  readonly createdAt = Date.now();
  /** Environment variables of every call, and the secrets given to the session so far. */
  readonly env = new SessionEnv();
  private lastUsed = Date.now();
  private callCount = 0;
  /** Calls running code now (one at most per runner kind). */
  private running = 0;
  /** Tasks serialize() or alongside() accepted that have not finished (queued or under way). */
  private pending = 0;
  private readonly sandboxes = new Map<RunnerKind, Sandbox>();
  /** The sandbox every runner of the session runs in, where the host allows one (see SessionMachine). */
  private ownMachine: SessionMachine | undefined;
  /**
   * Runner kinds whose interpreter state was lost with no result saying so yet (evicted, died
   * while idle, killed in a call whose caller had gone): the next call there reports state_reset.
   */
  private readonly lostState = new Set<RunnerKind>();
  private ownFilesystem = false;
  private overLimitReason: string | undefined;
  /** Per runner kind, the tail of its calls' queue: a runner runs one call at a time; runners run side by side. */
  private readonly queues = new Map<RunnerKind, Promise<unknown>>();

  constructor(
    readonly owner: string,
    readonly id: string,
    /** The server minted the id, so any caller holding it may use the session. */
    readonly shared: boolean,
    readonly workspaceDir: string,
    /** Settles when the workspace is ready (its filesystem mounted); rejects when that failed. */
    readonly ready: Promise<void> = Promise.resolve(),
  ) {}

  /** The key of this session among all owners' sessions. */
  get key(): string {
    return sessionKey(this.owner, this.id);
  }

  get lastUsedAt(): number {
    return this.lastUsed;
  }

  /** Calls that ran code (a sandbox started and the run ended). */
  get calls(): number {
    return this.callCount;
  }

  /** A call runs in one of the session's sandboxes now. */
  get busy(): boolean {
    return this.running > 0;
  }

  /**
   * A call or file operation is queued or under way: the session must not expire or give way
   * under it (a call may wait for its workspace or an earlier call before it runs).
   */
  get inUse(): boolean {
    return this.running > 0 || this.pending > 0;
  }

  /** Whether the workspace is its own filesystem (kernel-enforced limits), known once `ready` settles. */
  get filesystem(): boolean {
    return this.ownFilesystem;
  }

  /** Why the workspace is over its limits after the last call (plain-directory workspaces): file_write is refused until it is not. */
  get overLimit(): string | undefined {
    return this.overLimitReason;
  }

  /** Runner kinds with a resident sandbox, in the order they started. */
  get runners(): RunnerKind[] {
    return [...this.sandboxes.keys()];
  }

  /** The resident sandbox for `kind`, alive or not. */
  sandbox(kind: RunnerKind): Sandbox | undefined {
    return this.sandboxes.get(kind);
  }

  /** Marks the session used now (a call ended, a file was written): idle expiry counts from here. */
  touch(): void {
    this.lastUsed = Date.now();
  }

  /** A call starts running code; until endCall() the session is busy and never expires or gives way. */
  beginCall(): void {
    this.running++;
  }

  /** The call's code ran to an outcome. */
  countCall(): void {
    this.callCount++;
    this.touch();
  }

  endCall(): void {
    this.running = Math.max(0, this.running - 1);
    this.touch();
  }

  /** Records the workspace check after a call: a reason while it is over its limits, undefined once within. */
  setOverLimit(reason: string | undefined): void {
    this.overLimitReason = reason;
  }

  /** Forgets `sandbox` as the resident sandbox for `kind` (it died); the caller disposes of it. */
  dropSandbox(kind: RunnerKind, sandbox: Sandbox): void {
    if (this.sandboxes.get(kind) === sandbox) this.sandboxes.delete(kind);
  }

  /** Gives up `sandbox` for `kind` to make room elsewhere: the next call in `kind` reports state_reset. */
  evict(kind: RunnerKind, sandbox: Sandbox): void {
    if (this.sandboxes.get(kind) !== sandbox) return;
    this.sandboxes.delete(kind);
    this.lostState.add(kind);
  }

  /** `kind`'s interpreter state was lost and no caller was told: the next call in `kind` reports state_reset. */
  stateLost(kind: RunnerKind): void {
    this.lostState.add(kind);
  }

  /** Whether `kind`'s state was lost unseen since the last call in `kind` asked; asking clears it. */
  takeStateLost(kind: RunnerKind): boolean {
    return this.lostState.delete(kind);
  }

  /**
   * Runs `task` after every earlier call of this session in runner `kind` has finished (and the
   * workspace is ready); calls in other runners do not wait for it, nor it for them.
   */
  serialize<T>(kind: RunnerKind, task: () => Promise<T>): Promise<T> {
    this.pending++;
    const next = (this.queues.get(kind) ?? this.ready.catch(() => undefined))
      .then(async () => {
        await this.ready;
        return task();
      })
      .finally(() => {
        this.pending--;
      });
    this.queues.set(kind, next.catch(() => undefined));
    return next;
  }

  /**
   * Runs `task` (a file operation) once the workspace is ready, at once, alongside any running call:
   * files need no interpreter, so reading a running job's progress file never waits for the job.
   */
  async alongside<T>(task: () => Promise<T>): Promise<T> {
    this.pending++;
    try {
      await this.ready;
      return await task();
    } finally {
      this.pending--;
    }
  }

  /** The manager's part: a sandbox it started for `kind` becomes resident. */
  adoptSandbox(kind: RunnerKind, sandbox: Sandbox): void {
    this.sandboxes.set(kind, sandbox);
  }

  /** The session's machine, alive or not, if it has one. */
  get machine(): SessionMachine | undefined {
    return this.ownMachine;
  }

  /** The manager's part: the machine its runners join from now on (undefined: it was disposed). */
  setMachine(machine: SessionMachine | undefined): void {
    this.ownMachine = machine;
  }

  /** The manager's part: every resident sandbox, handed over for disposal as the session ends. */
  releaseSandboxes(): Sandbox[] {
    const all = [...this.sandboxes.values()];
    this.sandboxes.clear();
    return all;
  }

  /** The manager's part: whether the workspace got its own filesystem. */
  setFilesystem(mounted: boolean): void {
    this.ownFilesystem = mounted;
  }
}

/** Owner and id in one map key; ids are scoped per owner, so two owners' "default" never meet. */
export function sessionKey(owner: string, id: string): string {
  return `${owner}\n${id}`;
}
