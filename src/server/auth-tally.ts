// Refusals at the door, folded per caller, reason and missing scope: the first of a window is recorded at once, the
// rest are counted and recorded as one auth_failure row with their count when the window ends.

import type { AuthFailureEvent, GovernanceEvents } from "../features/governance/index.js";
import type { Logger } from "../util/logger.js";

/** How long refusals of one caller for one reason are counted before their row is written, ms. */
export const TALLY_WINDOW_MS = 10_000;
/** Callers counted at once; past it a refusal is recorded on its own (bounded memory, nothing lost). */
export const TALLY_MAX_CALLERS = 4096;

type Refusal = Omit<AuthFailureEvent, "kind" | "time">;

interface Tally {
  /** The latest refusal counted, and how many were counted since the window's first row. */
  latest: Refusal;
  count: number;
  since: number;
}

/**
 * Without it a flood of bad keys from one peer is one audit row per request: it fills the write
 * queue (so keyed callers' executions meet backpressure and AUDIT_UNAVAILABLE) and the file (so
 * retention by size deletes real rows). With it, one peer costs two rows per window, each refusal counted.
 */
export class AuthFailureTally {
  private readonly open = new Map<string, Tally>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly events: GovernanceEvents,
    private readonly log: Logger,
    private readonly windowMs = TALLY_WINDOW_MS,
  ) {}

  /**
   * The window's first refusal of `refusal.client` for its reason is recorded now (awaited: the audit
   * pushes back); later ones return at once and are written, counted, when the window ends.
   */
  async record(refusal: Refusal): Promise<void> {
    const key = `${refusal.reason}\n${refusal.scope ?? ""}\n${refusal.client}`;
    const tally = this.open.get(key);
    if (tally) {
      tally.latest = refusal;
      tally.count += 1;
      return;
    }
    if (this.open.size >= TALLY_MAX_CALLERS) {
      await this.events.record({ kind: "auth_failure", ...refusal });
      return;
    }
    const fresh: Tally = { latest: refusal, count: 0, since: Date.now() };
    this.open.set(key, fresh);
    this.timer ??= setInterval(() => void this.flush(), this.windowMs).unref();
    try {
      await this.events.record({ kind: "auth_failure", ...refusal });
    } catch (error) {
      // Not lost: counted with the window's others, whose row is retried until the audit takes it.
      const open = this.open.get(key);
      if (open) open.count += 1;
      else this.open.set(key, { ...fresh, count: 1 });
      this.timer ??= setInterval(() => void this.flush(), this.windowMs).unref();
      throw error;
    }
  }

  /** Writes the counted refusals of every window that ended (all of them when `all`). */
  flush(all = false): Promise<void> {
    this.flushing ??= this.write(all).finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** Writes every count still open and stops the timer. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flushing;
    await this.flush(true);
  }

  private async write(all: boolean): Promise<void> {
    const now = Date.now();
    for (const [key, tally] of [...this.open]) {
      if (!all && now - tally.since < this.windowMs) continue;
      if (tally.count === 0) {
        this.open.delete(key);
        continue;
      }
      try {
        await this.events.record({ kind: "auth_failure", ...tally.latest, count: tally.count, since: tally.since });
        this.open.delete(key);
      } catch (error) {
        // Kept and counted on: the next window's flush tries again.
        this.log.warn({ err: error, client: tally.latest.client, count: tally.count }, "could not record counted authentication failures yet");
      }
    }
    if (this.open.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
