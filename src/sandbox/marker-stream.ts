// Splits one raw output stream of a runner into calls: bytes up to the call's marker belong to
// the call; a marker split across chunks is still found, and nothing after it is lost.

export class MarkerStream {
  private pending: Buffer = Buffer.alloc(0);
  private marker: Buffer | undefined;
  private seen = false;

  constructor(private readonly emit: (chunk: Buffer) => void) {}

  /** Starts a call: output from now until `marker` is the call's. Bytes that came between calls are emitted first. */
  begin(marker: Buffer): void {
    this.marker = marker;
    this.seen = false;
    this.flushPending();
  }

  get done(): boolean {
    return this.seen;
  }

  /** Feeds bytes; returns true when this chunk completed the call's output. */
  push(chunk: Buffer): boolean {
    if (!this.marker || this.seen) {
      // Between calls (a thread left printing in a session): keep it for the next call.
      this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
      return false;
    }
    const data = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const at = data.indexOf(this.marker);
    if (at >= 0) {
      if (at > 0) this.emit(data.subarray(0, at));
      this.pending = data.subarray(at + this.marker.length);
      this.seen = true;
      return true;
    }
    const keep = this.partialMarkerAtEnd(data, this.marker);
    if (data.length > keep) this.emit(data.subarray(0, data.length - keep));
    this.pending = data.subarray(data.length - keep);
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

  /** Emits what is held back (the stream ended or the sandbox died). */
  flushPending(): void {
    if (this.pending.length > 0) {
      const rest = this.pending;
      this.pending = Buffer.alloc(0);
      this.emit(rest);
    }
  }
}
