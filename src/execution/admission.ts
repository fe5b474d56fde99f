// Global admission: every live sandbox (running, idle in a session, warm in the pool) holds a
// lease on a global count and committed memory; callers beyond the caps wait, fairly by owner,
// and no owner holds more than its share of the sandboxes.

import { SandgateError } from "../errors/index.js";

export interface AdmissionOptions {
  /** Live sandboxes at once, all kinds and owners together. */
  maxSandboxes: number;
  /** Sum of the memory limits of live sandboxes, MiB. */
  maxCommittedMb: number;
  /** How long a call waits for room before it is refused, ms. */
  waitMs: number;
  /** Live sandboxes one owner may hold (spares it took from the pool included); defaults to maxSandboxes. */
  maxPerOwner?: number;
  /** Seconds until room is expected for `owner`, for the Retry-After of a refusal; waitMs when unknown. */
  expectedWaitS?: (owner: string) => number | undefined;
}

/** The default share of one owner: three quarters of the sandboxes, at least one, so others keep room. */
export function defaultSandboxesPerOwner(maxSandboxes: number): number {
  return Math.max(1, Math.floor((maxSandboxes * 3) / 4));
}

/**
 * The fairness rule at a full server, for sandboxes and session slots alike: a holder gives way
 * to a waiting caller when it holds at least two more than that caller, so it still holds as many
 * afterwards and two callers never take turns evicting each other.
 */
export function mustGiveWay(held: number, waiterHeld: number): boolean {
  return held >= waiterHeld + 2;
}

/** One sandbox's share of the caps; release() is idempotent. */
export interface Lease {
  readonly memoryMb: number;
  release(): void;
}

export interface AdmissionState {
  sandboxes: number;
  committedMb: number;
  waiting: number;
  maxSandboxes: number;
  /** Live sandboxes one owner may hold. */
  maxPerOwner: number;
  maxCommittedMb: number;
}

interface Waiter {
  owner: string;
  memoryMb: number;
  grant: (lease: Lease) => void;
  fail: (error: Error) => void;
}

export class Admission {
  private sandboxes = 0;
  private committedMb = 0;
  /** Live sandboxes charged to each owner. */
  private readonly held = new Map<string, number>();
  /** FIFO per owner; `ring` is the order owners are served in, one grant per turn. */
  private readonly queues = new Map<string, Waiter[]>();
  private ring: string[] = [];
  private readonly pressureListeners: Array<(owner: string) => void> = [];
  private readonly roomListeners: Array<() => void> = [];
  private closed = false;

  constructor(readonly options: AdmissionOptions) {}

  state(): AdmissionState {
    let waiting = 0;
    for (const queue of this.queues.values()) waiting += queue.length;
    return { sandboxes: this.sandboxes, committedMb: this.committedMb, waiting, maxSandboxes: this.options.maxSandboxes, maxPerOwner: this.maxPerOwner, maxCommittedMb: this.options.maxCommittedMb };
  }

  /** True while some call waits for room; the warm pool then neither refills nor keeps spares. */
  get queued(): boolean {
    return this.ring.length > 0;
  }

  /**
   * `listener` runs when a call of `owner` starts waiting: holders of spare or idle sandboxes
   * should give them up.
   */
  onPressure(listener: (owner: string) => void): void {
    this.pressureListeners.push(listener);
  }

  /** The most live sandboxes one owner may hold. */
  get maxPerOwner(): number {
    return Math.min(this.options.maxPerOwner ?? this.options.maxSandboxes, this.options.maxSandboxes);
  }

  /** Live sandboxes charged to `owner`. */
  heldBy(owner: string): number {
    return this.held.get(owner) ?? 0;
  }

  /** `holder`'s idle sandboxes give way to a waiting call of `waiter` (see mustGiveWay). */
  mustGiveWay(holder: string, waiter: string): boolean {
    return holder !== waiter && mustGiveWay(this.heldBy(holder), this.heldBy(waiter));
  }

  /** `owner` holds its whole share: it waits for one of its own sandboxes, never for others'. */
  atCap(owner: string): boolean {
    return this.heldBy(owner) >= this.maxPerOwner;
  }

  /** The first waiting owner that room would serve (not at its own cap), if any. */
  nextWaiting(): string | undefined {
    return this.ring.find((owner) => !this.atCap(owner));
  }

  /**
   * Charges one live sandbox to `owner` (a pool spare it took, whose lease stays the pool's);
   * the returned function ends the charge and is idempotent.
   */
  charge(owner: string): () => void {
    this.held.set(owner, this.heldBy(owner) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = this.heldBy(owner) - 1;
      if (left > 0) this.held.set(owner, left);
      else this.held.delete(owner);
      this.wake();
    };
  }

  /** `listener` runs when room was freed and nobody waits for it (the pool may refill). */
  onRoom(listener: () => void): void {
    this.roomListeners.push(listener);
  }

  /** A lease if there is room now and nobody is waiting; never waits. For spare sandboxes. */
  tryReserve(memoryMb: number): Lease | undefined {
    if (this.closed || this.queued || !this.fits(memoryMb)) return undefined;
    return this.take(memoryMb);
  }

  /**
   * A lease for one sandbox of `memoryMb`, waiting up to options.waitMs behind other callers
   * (round-robin between owners, first come first served within one); then TOO_MANY_REQUESTS.
   * An owner at its share (maxPerOwner) waits for one of its own sandboxes to end and holds
   * nobody else up.
   */
  acquire(memoryMb: number, owner: string, signal?: AbortSignal): Promise<Lease> {
    if (this.closed) return Promise.reject(new SandgateError("SHUTTING_DOWN", "sandgate is shutting down"));
    if (memoryMb > this.options.maxCommittedMb) {
      return Promise.reject(
        new SandgateError("LIMIT_EXCEEDED", `the call asks for ${memoryMb} MB but the server commits at most ${this.options.maxCommittedMb} MB to all sandboxes together`, {
          data: { field: "memory_mb", maxCommittedMb: this.options.maxCommittedMb },
        }),
      );
    }
    if (this.nextWaiting() === undefined && !this.atCap(owner) && this.fits(memoryMb)) return Promise.resolve(this.take(memoryMb, owner));
    return new Promise<Lease>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      const waiter: Waiter = {
        owner,
        memoryMb,
        grant: (lease) => {
          done();
          resolve(lease);
        },
        fail: (error) => {
          done();
          reject(error);
        },
      };
      const onAbort = (): void => {
        this.remove(waiter);
        waiter.fail(new SandgateError("TOO_MANY_REQUESTS", "the call was cancelled while it waited for a free sandbox", { data: this.refusalData(owner) }));
      };
      const timer = setTimeout(() => {
        this.remove(waiter);
        waiter.fail(this.refusal(owner));
      }, this.options.waitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted) return onAbort();
      this.enqueue(waiter);
      for (const listener of this.pressureListeners) listener(owner);
    });
  }

  /** Refuses every waiting call and every later one. */
  close(): void {
    this.closed = true;
    for (const queue of this.queues.values()) {
      for (const waiter of queue.splice(0)) waiter.fail(new SandgateError("SHUTTING_DOWN", "sandgate is shutting down"));
    }
    this.queues.clear();
    this.ring = [];
  }

  private fits(memoryMb: number): boolean {
    return this.sandboxes + 1 <= this.options.maxSandboxes && this.committedMb + memoryMb <= this.options.maxCommittedMb;
  }

  private take(memoryMb: number, owner?: string): Lease {
    this.sandboxes++;
    this.committedMb += memoryMb;
    const uncharge = owner === undefined ? undefined : this.charge(owner);
    let released = false;
    return {
      memoryMb,
      release: () => {
        if (released) return;
        released = true;
        this.sandboxes--;
        this.committedMb -= memoryMb;
        if (uncharge) uncharge();
        else this.wake();
      },
    };
  }

  /**
   * Grants room to waiters in ring order; an owner at its share is passed over (only its own
   * sandboxes can free room for it), an owner whose next call does not fit holds the line.
   */
  private wake(): void {
    let at = 0;
    while (at < this.ring.length) {
      const owner = this.ring[at]!;
      const queue = this.queues.get(owner);
      const head = queue?.[0];
      if (!queue || !head) {
        this.ring.splice(at, 1);
        this.queues.delete(owner);
        continue;
      }
      if (this.atCap(owner)) {
        at++;
        continue;
      }
      if (!this.fits(head.memoryMb)) return;
      queue.shift();
      this.ring.splice(at, 1);
      if (queue.length > 0) this.ring.push(owner);
      else this.queues.delete(owner);
      head.grant(this.take(head.memoryMb, owner));
    }
    if (!this.closed) for (const listener of this.roomListeners) listener();
  }

  private enqueue(waiter: Waiter): void {
    const queue = this.queues.get(waiter.owner);
    if (queue) queue.push(waiter);
    else {
      this.queues.set(waiter.owner, [waiter]);
      this.ring.push(waiter.owner);
    }
  }

  private remove(waiter: Waiter): void {
    const queue = this.queues.get(waiter.owner);
    if (!queue) return;
    const at = queue.indexOf(waiter);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) {
      this.queues.delete(waiter.owner);
      this.ring = this.ring.filter((o) => o !== waiter.owner);
    }
    // The one that left may have held the line for others that fit.
    this.wake();
  }

  /** What a refusal's data says: retry_after (seconds, the name every refusal for load uses) and the caps. */
  private refusalData(owner: string): { retry_after: number } & Record<string, unknown> {
    const expected = this.options.expectedWaitS?.(owner);
    return {
      retry_after: Math.max(1, Math.ceil(expected ?? this.options.waitMs / 1000)),
      maxSandboxes: this.options.maxSandboxes,
      maxSandboxesPerCaller: this.maxPerOwner,
      maxCommittedMb: this.options.maxCommittedMb,
    };
  }

  private refusal(owner: string): SandgateError {
    const { maxSandboxes, maxCommittedMb, waitMs } = this.options;
    const data = this.refusalData(owner);
    const within = `within ${Math.round(waitMs / 100) / 10} s; retry in ${data.retry_after} s`;
    const message = this.atCap(owner)
      ? `you hold ${this.heldBy(owner)} live sandboxes, the most one caller may hold of the server's ${maxSandboxes}, and none of yours ended ${within} (stop a session you no longer need to free one)`
      : `the server is at its limit of ${maxSandboxes} sandboxes / ${maxCommittedMb} MB committed and no room came free ${within}`;
    return new SandgateError("TOO_MANY_REQUESTS", message, { data });
  }
}
