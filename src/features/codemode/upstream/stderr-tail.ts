// The last few kilobytes a stdio server wrote to stderr, kept for error messages.
// stderr is never forwarded anywhere: it may hold secrets and stdout belongs to the MCP transport.

const STDERR_TAIL_BYTES = 4096;

export class StderrTail {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly limit = STDERR_TAIL_BYTES) {}

  push(chunk: Buffer | string): void {
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    this.chunks.push(buf);
    this.size += buf.length;
    while (this.size > this.limit && this.chunks.length > 0) {
      const first = this.chunks[0]!;
      const excess = this.size - this.limit;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
      }
    }
  }

  /** The kept text, trimmed; a partial first line (cut by the limit) is dropped. */
  text(): string {
    let text = Buffer.concat(this.chunks).toString("utf8");
    const cut = this.size >= this.limit;
    if (cut) {
      const newline = text.indexOf("\n");
      if (newline >= 0 && newline < text.length - 1) text = text.slice(newline + 1);
    }
    return text.trim();
  }

  clear(): void {
    this.chunks = [];
    this.size = 0;
  }
}
