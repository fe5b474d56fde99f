// Splits one raw output stream of a runner into calls: bytes up to the call's marker belong to
// the call; a marker split across chunks is still found. Bytes between calls are counted, not kept.

export class MarkerStream {
  /** During a call: a tail that may be the start of the marker (never longer than the marker). */
  private pending: Buffer = Buffer.alloc(0);
  private marker: Buffer | undefined;
  private seen = false;
  /**
   * Bytes that came while no call was running (a thread or timer a call left behind, where the
   * sandbox cannot be frozen). Kept, they grew without limit and were copied on every chunk.
   */
  discardedBytes = 0;

  constructor(private readonly emit: (chunk: Buffer) => void) {}

  /** Starts a call: output from now until `marker` is the call's. */
  begin(marker: Buffer): void {
    this.marker = marker;
    this.seen = false;
    this.pending = Buffer.alloc(0);
  }

  get done(): boolean {
    return this.seen;
  }

  /** Feeds bytes; returns true when this chunk completed the call's output. */
  push(chunk: Buffer): boolean {
    if (!this.marker || this.seen) {
      this.discardedBytes += chunk.length;
      return false;
    }
    // `pending` is shorter than the marker, so this copies little beyond the chunk itself.
    const data = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const at = data.indexOf(this.marker);
    if (at >= 0) {
      if (at > 0) this.emit(data.subarray(0, at));
      this.discardedBytes += data.length - at - this.marker.length;
      this.pending = Buffer.alloc(0);
      this.seen = true;
      return true;
    }
    const keep = this.partialMarkerAtEnd(data, this.marker);
    if (data.length > keep) this.emit(data.subarray(0, data.length - keep));
    // A copy, so the held bytes do not pin the whole chunk they came in.
    this.pending = keep === 0 ? Buffer.alloc(0) : Buffer.from(data.subarray(data.length - keep));
    return false;
  }

  /** Length of the longest tail of `data` that could be the start of the marker: only that is held back. */
  private partialMarkerAtEnd(data: Buffer, marker: Buffer): number {
    const from = Math.max(0, data.length - marker.length + 1);
    for (let at = data.indexOf(marker[0]!, from); at >= 0; at = data.indexOf(marker[0]!, at + 1)) {
      if (marker.subarray(0, data.length - at).equals(data.subarray(at))) return data.length - at;
    }
    return 0;
  }

  /** Emits what is held back (the stream ended or the sandbox died during a call). */
  flushPending(): void {
    if (this.pending.length > 0) {
      const rest = this.pending;
      this.pending = Buffer.alloc(0);
      this.emit(rest);
    }
  }
}
