// The per-client concurrency cap: each client (an MCP session, or an API key or address for
// REST) may have a bounded number of executions running; more are refused with 429.

import { SandgateError } from "../errors/index.js";

export class ClientLimiter {
  private readonly running = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Takes a slot for `client`; call the returned function exactly once when done. */
  acquire(client: string): () => void {
    const count = this.running.get(client) ?? 0;
    if (count >= this.max) {
      throw new SandgateError("TOO_MANY_REQUESTS", `this client already has ${count} executions running (the limit); wait for one to finish`, {
        data: { limit: this.max },
      });
    }
    this.running.set(client, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.running.get(client) ?? 1) - 1;
      if (left <= 0) this.running.delete(client);
      else this.running.set(client, left);
    };
  }
}
