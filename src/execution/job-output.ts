// A background job's output as it arrives: the latest window of each stream under absolute
// offsets (characters since the job started), read from any offset, and a wake-up on new text.

import type { OutputStream } from "../sandbox/index.js";

/** Text of one stream from an offset, as far as the window and `maxChars` allow. */
export interface OutputSlice {
  text: string;
  /** Offset of the first character of `text`. */
  from: number;
  /** Offset to ask from next time. */
  next: number;
  /** Characters before `from` that were asked for but have left the window. */
  skipped: number;
  /** Output after `next` is already there (the slice was cut at `maxChars`). */
  more: boolean;
}

export class JobOutput {
  /**
   * Each stream's text from `base` on: its window, and up to a quarter window before it not cut
   * yet (a cut copies the window: cutting at every chunk made a run of small chunks quadratic).
   */
  private readonly text: Record<OutputStream, string> = { stdout: "", stderr: "" };
  /** Offset of each stream's first character kept. */
  private readonly base: Record<OutputStream, number> = { stdout: 0, stderr: 0 };
  private readonly waiters = new Set<() => void>();
  private ended = false;

  /** `windowChars` of each stream are kept; older text is dropped (the run's full output is saved as for any call). */
  constructor(private readonly windowChars: number) {}

  append(stream: OutputStream, chunk: string): void {
    if (this.ended || chunk === "") return;
    this.text[stream] += chunk;
    const extra = this.text[stream].length - this.windowChars;
    if (extra > this.windowChars / 4) {
      this.text[stream] = this.text[stream].slice(extra);
      this.base[stream] += extra;
    }
    this.wake();
  }

  /**
   * No more output will come; waiters wake. Only the last `keepChars` of each stream stay (a
   * finished job is kept for minutes, its full output is saved with its result).
   */
  end(keepChars = this.windowChars): void {
    this.ended = true;
    for (const stream of ["stdout", "stderr"] as const) {
      const first = Math.max(this.first(stream), this.endOf(stream) - keepChars);
      if (first <= this.base[stream]) continue;
      // A copy: a slice would keep the whole window alive behind it.
      this.text[stream] = Buffer.from(this.text[stream].slice(first - this.base[stream]), "utf16le").toString("utf16le");
      this.base[stream] = first;
    }
    this.wake();
  }

  get done(): boolean {
    return this.ended;
  }

  /** Offset just past the last character received. */
  endOf(stream: OutputStream): number {
    return this.base[stream] + this.text[stream].length;
  }

  /** Offset of the window's first character. */
  private first(stream: OutputStream): number {
    return Math.max(this.base[stream], this.endOf(stream) - this.windowChars);
  }

  read(stream: OutputStream, since = 0, maxChars = Infinity): OutputSlice {
    const first = this.first(stream);
    const from = Math.min(Math.max(since, first), this.endOf(stream));
    const at = from - this.base[stream];
    const text = this.text[stream].slice(at, at + maxChars);
    const next = from + text.length;
    return { text, from, next, skipped: Math.max(0, Math.min(from, first) - since), more: next < this.endOf(stream) };
  }

  /** Resolves on the next output or the end, after `ms`, or when `signal` aborts, whichever comes first. */
  changed(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.ended || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
