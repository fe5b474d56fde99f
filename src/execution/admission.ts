// Global admission: every live sandbox (running, idle in a session, warm in the pool) holds a
// lease on a global count and committed memory; callers beyond the caps wait, fairly by owner.

import { SandgateError } from "../errors/index.js";

export interface AdmissionOptions {
  /** Live sandboxes at once, all kinds and owners together. */
  maxSandboxes: number;
  /** Sum of the memory limits of live sandboxes, MiB. */
  maxCommittedMb: number;
  /** How long a call waits for room before it is refused, ms. */
  waitMs: number;
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
  /** FIFO per owner; `ring` is the order owners are served in, one grant per turn. */
  private readonly queues = new Map<string, Waiter[]>();
  private ring: string[] = [];
  private readonly pressureListeners: Array<() => void> = [];
  private readonly roomListeners: Array<() => void> = [];
  private closed = false;

  constructor(readonly options: AdmissionOptions) {}

  state(): AdmissionState {
    let waiting = 0;
    for (const queue of this.queues.values()) waiting += queue.length;
    return { sandboxes: this.sandboxes, committedMb: this.committedMb, waiting, maxSandboxes: this.options.maxSandboxes, maxCommittedMb: this.options.maxCommittedMb };
  }

  /** True while some call waits for room; the warm pool then neither refills nor keeps spares. */
  get queued(): boolean {
    return this.ring.length > 0;
  }

  /** `listener` runs when a call starts waiting: holders of spare sandboxes should give them up. */
  onPressure(listener: () => void): void {
    this.pressureListeners.push(listener);
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
    if (!this.queued && this.fits(memoryMb)) return Promise.resolve(this.take(memoryMb));
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
        waiter.fail(new SandgateError("TOO_MANY_REQUESTS", "the call was cancelled while it waited for a free sandbox", { data: this.refusalData() }));
      };
      const timer = setTimeout(() => {
        this.remove(waiter);
        waiter.fail(this.refusal());
      }, this.options.waitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted) return onAbort();
      this.enqueue(waiter);
      for (const listener of this.pressureListeners) listener();
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

  private take(memoryMb: number): Lease {
    this.sandboxes++;
    this.committedMb += memoryMb;
    let released = false;
    return {
      memoryMb,
      release: () => {
        if (released) return;
        released = true;
        this.sandboxes--;
        this.committedMb -= memoryMb;
        this.wake();
      },
    };
  }

  /** Grants room to waiters in ring order; an owner whose next call does not fit holds the line. */
  private wake(): void {
    while (this.ring.length > 0) {
      const owner = this.ring[0]!;
      const queue = this.queues.get(owner);
      const head = queue?.[0];
      if (!queue || !head) {
        this.ring.shift();
        this.queues.delete(owner);
        continue;
      }
      if (!this.fits(head.memoryMb)) return;
      queue.shift();
      this.ring.shift();
      if (queue.length > 0) this.ring.push(owner);
      else this.queues.delete(owner);
      head.grant(this.take(head.memoryMb));
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

  private refusalData(): Record<string, unknown> {
    return {
      retryAfterS: Math.max(1, Math.ceil(this.options.waitMs / 1000)),
      maxSandboxes: this.options.maxSandboxes,
      maxCommittedMb: this.options.maxCommittedMb,
    };
  }

  private refusal(): SandgateError {
    const { maxSandboxes, maxCommittedMb, waitMs } = this.options;
    return new SandgateError(
      "TOO_MANY_REQUESTS",
      `the server is at its limit of ${maxSandboxes} sandboxes / ${maxCommittedMb} MB committed and no room came free within ${Math.round(waitMs / 100) / 10} s; retry shortly`,
      { data: this.refusalData() },
    );
  }
}
