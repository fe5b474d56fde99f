// The per-caller concurrency cap: each verified identity (an API key's name; without keys an
// MCP session or a REST peer address) may have a bounded number of executions running.

import { SandgateError } from "../errors/index.js";

/** Seconds a refused caller is told to wait: long enough for a typical call to finish. */
const RETRY_AFTER_S = 2;

export class ClientLimiter {
  private readonly running = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Takes a slot for `owner`; call the returned function exactly once when done. */
  acquire(owner: string): () => void {
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
