// The warm pool: sandboxes started ahead of time, one runner kind each, handed out once to a
// stateless call and never reused. Refills in the background; never holds more than asked.

import { SandgateError } from "../errors/index.js";
import { RUNNER_KINDS, RUNNER_SPECS } from "../languages/index.js";
import type { Logger } from "../util/logger.js";
import type { ResolvedLimits } from "./limits.js";
import type { RunnerKind, SandboxRuntime } from "./runtime.js";
import { Sandbox } from "./sandbox.js";

export type PoolSizes = Record<RunnerKind, number>;

/**
 * The server-wide caps as the pool sees them: a spare sandbox is started only with a lease
 * granted now, never by waiting (callers come first). Leases are idempotent to release.
 */
export interface PoolBudget {
  tryReserve(memoryMb: number): { release(): void } | undefined;
  /** True while callers wait for room: a spare that lands then is given up, not kept. */
  readonly queued: boolean;
}

const UNLIMITED: PoolBudget = { tryReserve: () => ({ release: () => undefined }), queued: false };

export interface PoolKindState {
  target: number;
  ready: number;
  starting: number;
  waiting: number;
  started: number;
  failures: number;
  lastError?: string;
}

interface KindPool {
  ready: Sandbox[];
  waiters: Array<{ resolve: (s: Sandbox) => void; reject: (e: Error) => void }>;
  starting: number;
  started: number;
  failures: number;
  lastError?: string;
  retryAt: number;
  /** Spares handed out whose callers have not had their answer yet: no spare is started meanwhile. */
  answering: number;
}

const RETRY_AFTER_FAILURE_MS = 1000;
/**
 * After a spare gave way to a waiting caller, spares come back only once the server has been
 * free of pressure this long: refilling at the first free room fed the next shrink, and under a
 * steady load of stateless calls the pool started and killed spares of other kinds without end.
 */
const QUIET_AFTER_PRESSURE_MS = 2000;
/** Sandboxes of one kind being started at once; more only queue CPU contention on small hosts. */
const MAX_CONCURRENT_STARTS = 4;

export class WarmPool {
  private readonly pools: Record<RunnerKind, KindPool>;
  private closed = false;
  private readonly disposing = new Set<Promise<void>>();
  /** The lease of each spare sandbox (ready, or started to become one); released when it closes. */
  private readonly leases = new Map<Sandbox, { release(): void }>();
  /** Until when spares are not refilled (a spare gave way under pressure); callers waiting are still served. */
  private quietUntil = 0;
  private quietTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly sizes: PoolSizes,
    /** The limits pooled sandboxes are started with; calls that ask for others start their own. */
    readonly limits: ResolvedLimits,
    private readonly log: Logger,
    private readonly budget: PoolBudget = UNLIMITED,
  ) {
    const empty = (): KindPool => ({ ready: [], waiters: [], starting: 0, started: 0, failures: 0, retryAt: 0, answering: 0 });
    this.pools = Object.fromEntries(RUNNER_KINDS.map((kind) => [kind, empty()])) as Record<RunnerKind, KindPool>;
  }

  /** Begins filling every pool to its target size. */
  fill(): void {
    for (const kind of RUNNER_KINDS) this.refill(kind);
  }

  /**
   * A ready sandbox for one stateless call that already holds its own lease of the budget (the
   * spare's lease is given back); the caller gives the sandbox back with release().
   */
  acquire(kind: RunnerKind): Promise<Sandbox> {
    if (this.closed) return Promise.reject(new SandgateError("SHUTTING_DOWN", "sandgate is shutting down"));
    const pool = this.pools[kind];
    const ready = this.takeReady(kind);
    if (ready) {
      this.leases.get(ready)?.release();
      this.leases.delete(ready);
      return Promise.resolve(ready);
    }
    return new Promise<Sandbox>((resolve, reject) => {
      pool.waiters.push({ resolve, reject });
      this.refill(kind, true);
    });
  }

  /**
   * A ready sandbox with the spare's lease still on it (it counts against the budget until it
   * closes), for a caller that has no lease of its own; undefined when none is ready.
   */
  take(kind: RunnerKind): Sandbox | undefined {
    if (this.closed) return undefined;
    const sandbox = this.takeReady(kind);
    if (sandbox) this.leases.delete(sandbox);
    return sandbox;
  }

  /** Whether a spare of `kind` is ready to take now. */
  hasReady(kind: RunnerKind): boolean {
    return !this.closed && this.pools[kind].ready.length > 0;
  }

  /**
   * Gives up one ready sandbox, of the kind with most spares, so that its room goes to a
   * waiting caller; false when there was none.
   */
  shrink(): boolean {
    const fullest = Object.values(this.pools).reduce((a, b) => (b.ready.length > a.ready.length ? b : a));
    const sandbox = fullest.ready.shift();
    if (sandbox) {
      void this.discard(sandbox);
      this.quietUntil = Date.now() + QUIET_AFTER_PRESSURE_MS;
      clearTimeout(this.quietTimer);
      this.quietTimer = setTimeout(() => this.fill(), QUIET_AFTER_PRESSURE_MS + 1).unref();
    }
    return sandbox !== undefined;
  }

  private takeReady(kind: RunnerKind): Sandbox | undefined {
    const pool = this.pools[kind];
    while (pool.ready.length > 0) {
      const sandbox = pool.ready.shift()!;
      // The refill waits for release() and the caller's answer: starting a sandbox blocks the
      // event loop for a moment, and that moment must not fall inside this caller's call.
      if (sandbox.alive) return sandbox;
      void this.discard(sandbox);
    }
    return undefined;
  }

  /** Stores a spare sandbox whose lease ends when its processes are gone. */
  private keep(kind: RunnerKind, sandbox: Sandbox, lease: { release(): void }): void {
    this.leases.set(sandbox, lease);
    void sandbox.whenClosed().then(() => {
      lease.release();
      this.leases.delete(sandbox);
    });
    this.pools[kind].ready.push(sandbox);
  }

  /**
   * Takes back a sandbox handed out by acquire() or take(): it is destroyed (never reused), and a
   * fresh one started once `answered` has settled and the turn of the event loop that answered the
   * caller is over (the code awaiting the result has run). Spawning bubblewrap holds the event loop
   * until the child has exec'd (10-20 ms on a busy host): started while the call was still being
   * finished (its run recorded by the gate), that spawn landed inside the call.
   */
  release(sandbox: Sandbox, answered: Promise<unknown> = Promise.resolve()): Promise<void> {
    const pool = this.pools[sandbox.kind];
    pool.answering++;
    const refill = (): void =>
      void setImmediate(() => {
        pool.answering--;
        this.refill(sandbox.kind);
      });
    answered.then(refill, refill);
    return new Promise((resolve) => {
      setImmediate(() => void this.discard(sandbox).then(resolve));
    });
  }

  /** Disposes a sandbox and remembers it until done, so that close() can wait for every one. */
  private discard(sandbox: Sandbox): Promise<void> {
    const done = sandbox.dispose().finally(() => this.disposing.delete(done));
    this.disposing.add(done);
    return done;
  }

  state(): Record<RunnerKind, PoolKindState> {
    const out = {} as Record<RunnerKind, PoolKindState>;
    for (const [kind, pool] of Object.entries(this.pools) as Array<[RunnerKind, KindPool]>) {
      out[kind] = {
        target: this.sizes[kind],
        ready: pool.ready.length,
        starting: pool.starting,
        waiting: pool.waiters.length,
        started: pool.started,
        failures: pool.failures,
        ...(pool.lastError ? { lastError: pool.lastError } : {}),
      };
    }
    return out;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.quietTimer);
    const all: Array<Promise<void>> = [];
    for (const pool of Object.values(this.pools)) {
      for (const waiter of pool.waiters.splice(0)) waiter.reject(new SandgateError("SHUTTING_DOWN", "sandgate is shutting down"));
      for (const sandbox of pool.ready.splice(0)) all.push(this.discard(sandbox));
    }
    await Promise.all(all);
    // Starts still in flight dispose themselves when they land (see launch()).
    while (Object.values(this.pools).some((p) => p.starting > 0)) await new Promise((r) => setTimeout(r, 10));
    while (this.disposing.size > 0) await Promise.all([...this.disposing]);
  }

  private refill(kind: RunnerKind, urgent = false): void {
    const pool = this.pools[kind];
    if (this.closed) return;
    if (!urgent && Date.now() < pool.retryAt) return;
    // Room freed while a caller is still being answered (its sandbox closed) waits for the answer;
    // release() refills then. Callers waiting for a sandbox never wait for that.
    if (!urgent && pool.answering > 0 && pool.waiters.length === 0) return;
    const spares = Date.now() < this.quietUntil ? 0 : Math.max(0, this.sizes[kind] - pool.ready.length);
    const wanted = spares + pool.waiters.length;
    // A burst of callers must not start a burst of sandboxes: the rest wait for the next one.
    const cap = Math.max(this.sizes[kind], MAX_CONCURRENT_STARTS);
    for (let i = pool.starting; i < Math.min(wanted, cap); i++) {
      // Waiting callers hold leases of their own; a spare needs room now (none under pressure).
      const lease = i < pool.waiters.length ? undefined : this.budget.tryReserve(this.limits.memoryMb);
      if (i >= pool.waiters.length && !lease) break;
      this.launch(kind, lease);
    }
  }

  private launch(kind: RunnerKind, lease: { release(): void } | undefined): void {
    const pool = this.pools[kind];
    pool.starting++;
    this.startWarm(kind).then(
      (sandbox) => {
        pool.starting--;
        pool.started++;
        if (this.closed) {
          lease?.release();
          return void this.discard(sandbox);
        }
        const waiter = pool.waiters.shift();
        if (waiter) {
          lease?.release();
          waiter.resolve(sandbox);
        } else {
          const kept = this.budget.queued ? undefined : (lease ?? this.budget.tryReserve(this.limits.memoryMb));
          if (kept) this.keep(kind, sandbox, kept);
          else {
            // Its room goes to a caller waiting for it once the processes are gone.
            void this.discard(sandbox).finally(() => lease?.release());
          }
        }
        if (pool.waiters.length > 0) this.refill(kind, true);
      },
      (error: unknown) => {
        lease?.release();
        pool.starting--;
        pool.failures++;
        pool.lastError = error instanceof Error ? error.message : String(error);
        pool.retryAt = Date.now() + RETRY_AFTER_FAILURE_MS;
        this.log.warn({ kind, err: pool.lastError }, "warm pool could not start a sandbox");
        const waiter = pool.waiters.shift();
        if (waiter) waiter.reject(error instanceof Error ? error : new Error(String(error)));
        if (!this.closed && pool.waiters.length > 0) this.refill(kind, true);
        else if (!this.closed) setTimeout(() => this.refill(kind), RETRY_AFTER_FAILURE_MS).unref();
      },
    );
  }

  /**
   * Starts a sandbox and makes one throwaway call that warms the runner's lazy paths
   * (compilers, stdio streams), so the first real caller gets steady-state latency.
   */
  private async startWarm(kind: RunnerKind): Promise<Sandbox> {
    const sandbox = await Sandbox.start(this.runtime, { kind, limits: this.limits, oneCall: true });
    // A caller already waiting would only pay for the warm-up: hand the sandbox over as it is.
    if (this.pools[kind].waiters.length > 0) return sandbox;
    try {
      const warm = await sandbox.run({ code: RUNNER_SPECS[kind].warmUp, filename: "warm-up", timeoutMs: 10_000, outputCapBytes: 1024 });
      if (warm.status !== "ok") throw new SandgateError("SANDBOX_FAILED", `the ${kind} runner failed its warm-up call: ${warm.message ?? warm.status}`);
      return sandbox;
    } catch (error) {
      await sandbox.dispose();
      throw error;
    }
  }
}
