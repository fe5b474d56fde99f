// The per-caller concurrency cap: each verified identity (an API key's name; without keys an
// MCP session or a REST peer address) may have a bounded number of executions running, and none
// while the anomaly rules throttle it.

import { SandgateError } from "../errors/index.js";

/** Seconds a refused caller is told to wait: long enough for a typical call to finish. */
const RETRY_AFTER_S = 2;

export class ClientLimiter {
  private readonly running = new Map<string, number>();

  /** `throttle`: seconds `owner` is refused for after an anomaly (anomalies.throttleS), undefined when not. */
  constructor(
    private readonly max: number,
    private readonly throttle?: { throttledFor(owner: string): number | undefined },
  ) {}

  /**
   * Takes a slot for `owner`; call the returned function exactly once when done. A call that runs
   * code (`runsCode`) is refused while `owner` is throttled; reads of jobs, files and sessions are not.
   */
  acquire(owner: string, runsCode = true): () => void {
    const throttled = runsCode ? this.throttle?.throttledFor(owner) : undefined;
    if (throttled !== undefined) {
      throw new SandgateError(
        "TOO_MANY_REQUESTS",
        `your executions are refused for ${throttled} more s: an anomaly rule flagged this client's activity (see the audit's anomaly rows); retry after that`,
        { data: { retry_after: throttled, reason: "anomaly" } },
      );
    }
    const count = this.running.get(owner) ?? 0;
    if (count >= this.max) {
      throw new SandgateError(
        "TOO_MANY_REQUESTS",
        `you already have ${count} executions running, the most one caller may run at once; wait for one to finish and retry`,
        { data: { limit: this.max, retry_after: RETRY_AFTER_S } },
      );
    }
    this.running.set(owner, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.running.get(owner) ?? 1) - 1;
      if (left <= 0) this.running.delete(owner);
      else this.running.set(owner, left);
    };
  }
}
