// One saved output written as the call prints it (a spilled stream): a queue of chunks written in
// order to its file, a signal to slow down while the queue is long, and reads of it once written.

import { open, type FileHandle } from "node:fs/promises";
import type { OutputSink } from "../sandbox/index.js";

/** Queued bytes past which the writer asks for the pipe to pause; it resumes once under the low mark. */
const HIGH_WATER_BYTES = 4 << 20;
const LOW_WATER_BYTES = 1 << 20;
/**
 * Bytes gathered before a write, unless the stream ends: a write per 64 KiB pipe chunk cost the
 * loop about 8 ms per 10 MB in calls alone.
 */
const BATCH_BYTES = 256 * 1024;

export interface FileSinkOptions {
  path: string;
  /** Settles once the file may be created (its directory exists). */
  after: Promise<unknown>;
  /** Asks the store for `bytes` more (the stream has `written` so far); false: the copy is given up. */
  admit: (written: number, bytes: number) => boolean;
  /** The file could not be written. */
  onError: (error: unknown) => void;
}

export class FileSink implements OutputSink {
  private queue: Buffer[] = [];
  private queued = 0;
  private length = 0;
  private ended = false;
  private failed = false;
  private drains: Array<() => void> = [];
  private wake: (() => void) | undefined;
  /** Settles once every queued byte is written and the file closed, or the copy was given up. */
  readonly done: Promise<void>;

  constructor(private readonly options: FileSinkOptions) {
    this.done = this.writeLoop();
  }

  /** Whether the file holds the whole stream (once `done`). */
  get kept(): boolean {
    return !this.failed;
  }

  write(chunk: Buffer): boolean {
    if (this.failed || chunk.length === 0) return true;
    if (!this.options.admit(this.length, chunk.length)) {
      this.giveUp();
      return true;
    }
    this.length += chunk.length;
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (this.queued >= BATCH_BYTES) this.wakeUp();
    return this.queued < HIGH_WATER_BYTES;
  }

  onDrain(resume: () => void): void {
    if (this.queued <= LOW_WATER_BYTES || this.failed) resume();
    else this.drains.push(resume);
  }

  end(): Promise<void> {
    this.ended = true;
    this.wakeUp();
    return this.done;
  }

  async read(start: number, end: number): Promise<Buffer> {
    await this.done;
    if (this.failed) throw new Error("the saved copy of this output was given up");
    const handle = await open(this.options.path, "r");
    try {
      const out = Buffer.alloc(Math.max(0, Math.min(end, this.length) - start));
      let filled = 0;
      while (filled < out.length) {
        const { bytesRead } = await handle.read(out, filled, out.length - filled, start + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return out.subarray(0, filled);
    } finally {
      await handle.close();
    }
  }

  /** The store has no room for it (or writing failed): nothing more is queued, and whoever waits goes on. */
  private giveUp(): void {
    this.failed = true;
    this.queue = [];
    this.queued = 0;
    this.releaseDrains();
    this.wakeUp();
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private releaseDrains(): void {
    const drains = this.drains;
    this.drains = [];
    for (const resume of drains) resume();
  }

  /** Writes the queue in order, a batch per writev, until the stream ends; each byte is written once. */
  private async writeLoop(): Promise<void> {
    let handle: FileHandle | undefined;
    try {
      await this.options.after;
      handle = await open(this.options.path, "w", 0o600);
      for (;;) {
        if (this.failed || (this.queue.length === 0 && this.ended)) break;
        if (this.queue.length === 0 || (this.queued < BATCH_BYTES && !this.ended)) {
          await new Promise<void>((resolve) => (this.wake = resolve));
          continue;
        }
        const batch = this.queue;
        this.queue = [];
        const size = batch.reduce((sum, chunk) => sum + chunk.length, 0);
        await writeAll(handle, batch);
        this.queued = Math.max(0, this.queued - size);
        if (this.queued <= LOW_WATER_BYTES) this.releaseDrains();
      }
    } catch (error) {
      this.giveUp();
      this.options.onError(error);
    } finally {
      this.releaseDrains();
      await handle?.close().catch(() => undefined);
    }
  }
}

/** Writes every byte of `chunks` (writev may write fewer than asked). */
async function writeAll(handle: FileHandle, chunks: Buffer[]): Promise<void> {
  let rest = chunks;
  while (rest.length > 0) {
    let { bytesWritten } = await handle.writev(rest);
    const left: Buffer[] = [];
    for (const chunk of rest) {
      if (bytesWritten >= chunk.length) bytesWritten -= chunk.length;
      else {
        left.push(chunk.subarray(bytesWritten));
        bytesWritten = 0;
      }
    }
    rest = left;
  }
}
