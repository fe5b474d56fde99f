// Forwards output of running code to a client in batches: chunks within a short window are
// sent together, and a flood is cut after a budget so streaming cannot swamp the client.

import type { OutputStream } from "../sandbox/index.js";

export interface OutputForwarderOptions {
  send: (stream: OutputStream, text: string) => void;
  /** Most bytes forwarded per call; the rest stays in the result and the saved output files. */
  budgetBytes?: number;
  flushMs?: number;
}

export class OutputForwarder {
  private readonly pending: Record<OutputStream, string> = { stdout: "", stderr: "" };
  private timer: NodeJS.Timeout | undefined;
  private sentBytes = 0;
  private exhausted = false;
  private readonly budget: number;
  private readonly flushMs: number;

  constructor(private readonly options: OutputForwarderOptions) {
    this.budget = options.budgetBytes ?? 256 * 1024;
    this.flushMs = options.flushMs ?? 25;
  }

  /** The callback to hand to the engine as onOutput. */
  readonly push = (stream: OutputStream, text: string): void => {
    if (this.exhausted) return;
    this.pending[stream] += text;
    if (this.pending.stdout.length + this.pending.stderr.length >= 16 * 1024) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.flushMs);
  };

  /** Sends whatever is pending; call once more after the run ends. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const stream of ["stdout", "stderr"] as const) {
      let text = this.pending[stream];
      this.pending[stream] = "";
      if (!text || this.exhausted) continue;
      const room = this.budget - this.sentBytes;
      if (Buffer.byteLength(text) > room) {
        text = `${text.slice(0, Math.max(0, room))}\n[sandgate: streaming stopped after ${this.budget} bytes; the result holds the output]\n`;
        this.exhausted = true;
      }
      this.sentBytes += Buffer.byteLength(text);
      this.options.send(stream, text);
    }
  }
}
