// A fixed number of places for work done at once; callers beyond it wait in order. A freed place
// passes straight to the next waiter, so a caller arriving in between cannot push the count over.

export interface SlotWait {
  /** Stops waiting: acquire rejects with the signal's reason (when an Error). */
  signal?: AbortSignal | undefined;
  /** Longest wait for a place; then acquire rejects with `timeoutError()`. */
  timeoutMs?: number | undefined;
  timeoutError?: (() => Error) | undefined;
}

export class Slots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly max: number) {}

  /** Places taken now; never more than `max`. */
  get inUse(): number {
    return this.running;
  }

  /** The most places taken at once. */
  get size(): number {
    return this.max;
  }

  /**
   * Resolves with the function that gives the place back (a second call does nothing). A wait
   * stopped by `signal` or `timeoutMs` leaves the queue and takes no place.
   */
  async acquire(wait: SlotWait = {}): Promise<() => void> {
    if (this.running < this.max) this.running++;
    else await this.queue(wait);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    };
  }

  private queue({ signal, timeoutMs, timeoutError }: SlotWait): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = (error: Error): void => {
        const at = this.waiting.indexOf(granted);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        reject(error);
      };
      const stoppedBy = (): Error => (signal?.reason instanceof Error ? signal.reason : new Error("the wait for a place was stopped"));
      const onAbort = (): void => leave(stoppedBy());
      function granted(): void {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }
      if (signal?.aborted) return reject(stoppedBy());
      this.waiting.push(granted);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeoutMs !== undefined) timer = setTimeout(() => leave(timeoutError?.() ?? new Error(`no place came free within ${timeoutMs} ms`)), timeoutMs);
    });
  }
}
