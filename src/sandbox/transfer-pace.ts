// The least pace a streamed transfer must keep: one that moves less than `bytes` within a window
// is ended, so slow or stalled readers and senders cannot hold the server's transfer places.

export interface MinimumRate {
  /** Bytes that must move within each window (or all that is left, when less). */
  bytes: number;
  windowMs: number;
}

/** 16 KiB per 30 s (about 0.5 KiB/s): any real client, on any link, moves more. */
export const DEFAULT_MINIMUM_RATE: MinimumRate = { bytes: 16 * 1024, windowMs: 30_000 };

export interface PaceWatch {
  /** Stops watching (the transfer ended); idempotent. */
  stop(): void;
}

/**
 * Calls `onSlow` once when `moved()` grew by less than `rate.bytes` (or by less than `left()`, when
 * that is smaller) within `rate.windowMs`. Checked four times a window: a stalled transfer ends at
 * most a quarter window after its window ran out.
 */
export function watchPace(rate: MinimumRate, moved: () => number, onSlow: () => void, left: () => number = () => Infinity): PaceWatch {
  let mark = { at: Date.now(), moved: moved() };
  const tick = setInterval(
    () => {
      const now = Date.now();
      const since = moved() - mark.moved;
      if (since >= Math.min(rate.bytes, left() + since)) mark = { at: now, moved: mark.moved + since };
      else if (now - mark.at >= rate.windowMs) {
        clearInterval(tick);
        onSlow();
      }
    },
    Math.max(10, Math.round(rate.windowMs / 4)),
  );
  tick.unref();
  return { stop: () => clearInterval(tick) };
}

/** "16 KiB in 30 s", for messages. */
export function describeRate(rate: MinimumRate): string {
  const size = rate.bytes % 1024 === 0 ? `${rate.bytes / 1024} KiB` : `${rate.bytes} bytes`;
  return `${size} in ${Math.round(rate.windowMs / 100) / 10} s`;
}
