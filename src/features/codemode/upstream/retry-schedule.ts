// When a failed upstream server is tried again: from a base wait doubling to a cap, each wait varied
// by ±20% so that servers that failed together are not retried together; one timer at a time.

/** setTimeout fires at once for longer delays. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class RetrySchedule {
  private timer: NodeJS.Timeout | undefined;
  /** When the planned retry fires (epoch ms). */
  private at: number | undefined;
  /** Retries planned since the count was last reset; the backoff doubles with each. */
  private count = 0;
  /** The planned retry is running (its timer fired, its attempt has not ended). */
  running = false;

  /** `maxMs` 0 never retries. */
  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
  ) {}

  /** Retries planned since the count was last reset. */
  get made(): number {
    return this.count;
  }

  /** When the next retry is planned, or undefined. */
  get nextAt(): number | undefined {
    return this.at;
  }

  /** Plans `attempt` after the next wait; no-op when retries are off or one is already planned. */
  plan(attempt: () => void): void {
    if (this.maxMs <= 0 || this.timer !== undefined) return;
    const base = Math.min(this.baseMs * 2 ** Math.min(this.count, 40), this.maxMs);
    const delay = Math.min(Math.round(base * (0.8 + Math.random() * 0.4)), this.maxMs, MAX_TIMER_MS);
    this.count++;
    this.at = Date.now() + delay;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.at = undefined;
      attempt();
    }, delay);
    this.timer.unref();
  }

  /** The server ran stably: the next failure starts from the base wait again. */
  reset(): void {
    this.count = 0;
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.at = undefined;
  }

  /** `; sandgate retries it in 8 s (at 2026-…Z)`, or why it is not. */
  note(): string {
    if (this.running) return "; sandgate is retrying it now";
    if (this.at === undefined) return "; it is not retried";
    const seconds = Math.max(1, Math.ceil((this.at - Date.now()) / 1000));
    return `; sandgate retries it in ${seconds} s (at ${new Date(this.at).toISOString()})`;
  }
}
