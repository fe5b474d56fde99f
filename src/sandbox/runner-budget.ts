// What one sandbox may cost the host through its runner pipes: frames, bytes and event-loop time it may
// take per second (a flood is slowed down by not reading it), and replies it may leave unread.

import type { Readable, Writable } from "node:stream";

/** Frames a runner may send per second, and in one burst (a tight loop of quick upstream calls). */
export const FRAMES_PER_SECOND = 5000;
/** Frame bytes a runner may send per second, and in one burst (one large tool argument). */
export const FRAME_BYTES_PER_SECOND = 16 * 1024 * 1024;
/**
 * Milliseconds of the host's event loop that handling what one sandbox sent may take per second, and
 * in one burst. Bytes alone do not bound it: parsing a 14 MiB object of a million keys takes a second
 * (and checking it took another while it was copied), so a stream of them held the loop 93% of the
 * time. An image at its 12 MiB maximum takes ~100 ms.
 */
export const HOST_MS_PER_SECOND = 100;
export const HOST_MS_BURST = 1000;
/** Reply bytes waiting in the host for a runner that does not read them (beyond the kernel's pipe). */
export const MAX_UNREAD_REPLY_BYTES = 32 * 1024 * 1024;
/**
 * Replies waiting in the host. Even `gather` of thousands of calls (all but 256 refused at once)
 * leaves fewer; more means nobody reads them, long before the byte cap is reached.
 */
export const MAX_UNREAD_REPLIES = 16_384;

/** A token bucket: spend() says how long to wait before the spender may go on. */
export class TokenBucket {
  private tokens: number;
  private last = performance.now();

  constructor(
    private readonly perSecond: number,
    private readonly burst = perSecond,
  ) {
    this.tokens = burst;
  }

  /** Takes `amount` (possibly into debt) and returns the milliseconds until the debt is paid. */
  spend(amount: number): number {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
    this.tokens -= amount;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.perSecond) * 1000);
  }
}

/**
 * The send budget of one sandbox, shared by every pipe the runner writes requests on: what a pipe
 * just delivered is charged, and over budget the pipe is not read for a while, so the runner
 * blocks on its own writes instead of the host buffering.
 */
export class PipeThrottle {
  private readonly frames = new TokenBucket(FRAMES_PER_SECOND);
  private readonly bytes = new TokenBucket(FRAME_BYTES_PER_SECOND);
  private readonly hostTime = new TokenBucket(HOST_MS_PER_SECOND, HOST_MS_BURST);
  private readonly paused = new Set<NodeJS.Timeout>();

  /** `exited`: the runner's process is gone; what is still in its pipes is read at full speed. */
  constructor(private readonly exited: () => boolean) {}

  /** Charges `bytes` and `frames` (messages) read from `pipe`, and the `hostMs` handling them took; pauses it while in debt. */
  charge(pipe: Readable, bytes: number, frames: number, hostMs = 0): void {
    const wait = Math.max(this.bytes.spend(bytes), this.frames.spend(frames), this.hostTime.spend(hostMs));
    if (wait <= 0 || pipe.isPaused() || this.exited()) return;
    pipe.pause();
    const timer = setTimeout(() => {
      this.paused.delete(timer);
      pipe.resume();
    }, wait);
    this.paused.add(timer);
  }

  /** The pipes have closed: pending resumes are dropped. */
  end(): void {
    for (const timer of this.paused) clearTimeout(timer);
    this.paused.clear();
  }
}

/**
 * Replies written to one runner pipe. Node buffers a write the kernel pipe cannot take, so a
 * runner that never reads would make the host hold every reply; this refuses to grow past the caps.
 */
export class ReplyPipe {
  /** Replies written since the pipe last had nothing waiting in the host. */
  private unread = 0;

  constructor(
    private readonly pipe: Writable,
    private readonly onOverflow: (waitingBytes: number, waitingReplies: number) => void,
  ) {
    pipe.on("drain", () => {
      this.unread = 0;
    });
  }

  /** Writes `data`, or calls onOverflow instead when the runner has left too much unread. */
  write(data: Buffer): boolean {
    const waiting = this.pipe.writableLength;
    if (waiting === 0) this.unread = 0;
    // One reply larger than the cap still goes through when nothing else waits.
    if ((waiting > 0 && waiting + data.length > MAX_UNREAD_REPLY_BYTES) || this.unread >= MAX_UNREAD_REPLIES) {
      this.onOverflow(waiting + data.length, this.unread + 1);
      return false;
    }
    if (this.pipe.destroyed || this.pipe.writableEnded) return false;
    this.pipe.write(data);
    if (this.pipe.writableLength > 0) this.unread += 1;
    return true;
  }
}
