// One call's output as its caller gets it: stdout and stderr bytes up to the call's cap, and the
// text passed on as it comes, decoded at UTF-8 character boundaries.

import { StringDecoder } from "node:string_decoder";

export type OutputStream = "stdout" | "stderr";

export class CallOutput {
  private readonly chunks: Record<OutputStream, Buffer[]> = { stdout: [], stderr: [] };
  private readonly decoders: Record<OutputStream, StringDecoder> = { stdout: new StringDecoder("utf8"), stderr: new StringDecoder("utf8") };
  private bytes = 0;

  constructor(
    private readonly capBytes: number,
    private readonly onText: ((stream: OutputStream, text: string) => void) | undefined,
  ) {}

  /** Adds a chunk; false when it went over the cap (the part that fits is kept, not passed on). */
  push(stream: OutputStream, chunk: Buffer): boolean {
    this.bytes += chunk.length;
    if (this.bytes > this.capBytes) {
      const room = chunk.length - (this.bytes - this.capBytes);
      if (room > 0) this.chunks[stream].push(chunk.subarray(0, room));
      return false;
    }
    this.chunks[stream].push(chunk);
    if (this.onText) {
      const text = this.decoders[stream].write(chunk);
      if (text) this.onText(stream, text);
    }
    return true;
  }

  /** Passes on what each decoder still holds (a character cut short at the end). */
  end(): void {
    for (const stream of ["stdout", "stderr"] as const) {
      const tail = this.decoders[stream].end();
      if (tail && this.onText) this.onText(stream, tail);
    }
  }

  bytesOf(stream: OutputStream): Buffer {
    return Buffer.concat(this.chunks[stream]);
  }

  /** The last `maxBytes` of a stream as text, without joining all of it. */
  tail(stream: OutputStream, maxBytes: number): string {
    const picked: Buffer[] = [];
    let length = 0;
    const chunks = this.chunks[stream];
    for (let i = chunks.length - 1; i >= 0 && length < maxBytes; i--) {
      picked.unshift(chunks[i]!);
      length += chunks[i]!.length;
    }
    const joined = Buffer.concat(picked);
    return joined.subarray(Math.max(0, joined.length - maxBytes)).toString("utf8");
  }
}
