// One call's output as its caller gets it: stdout and stderr bytes up to the call's cap, and the
// text passed on as it comes; a stream past its inline size goes to a sink whole, its ends kept here.

import { isAscii } from "node:buffer";
import { StringDecoder } from "node:string_decoder";

export type OutputStream = "stdout" | "stderr";

/** Where a stream longer than `inlineBytes` is written whole as it comes; only its ends stay in memory. */
export interface OutputSpill {
  /** Bytes of a stream kept whole in memory; the first byte past them spills the stream. */
  inlineBytes: number;
  /** Bytes kept in memory at each end of a spilled stream (what a result can show of it, and some). */
  keptBytes: number;
  /** A sink for the whole of `stream`, or undefined when there is none (the stream then stays in memory whole). */
  open(stream: OutputStream): OutputSink | undefined;
}

export interface OutputSink {
  /** Queues bytes to write; false when the queue is long: wait for onDrain before more come. */
  write(chunk: Buffer): boolean;
  /** Calls `resume` once, when the queue has been written (at once when it is short). */
  onDrain(resume: () => void): void;
  /** No more bytes come: settles once every queued byte is written (or the copy was given up). */
  end(): Promise<void>;
  /** Bytes [start, end) of the whole stream, once written; rejects when the copy was given up. */
  read(start: number, end: number): Promise<Buffer>;
}

/** A stream that was spilled: its length and counts, its two ends in memory, the rest in its sink. */
export interface SpilledStream {
  readonly length: number;
  /** UTF-16 code units of the whole stream decoded as UTF-8, as `toString("utf8")` would give them. */
  readonly chars: number;
  /** Line ends (0x0a bytes) in the whole stream. */
  readonly newlines: number;
  /** Bytes kept at each end: `ends` answers within [0, keptBytes) and [length - keptBytes, length). */
  readonly keptBytes: number;
  /** Bytes [start, end) lying within one of the two kept ends. */
  ends(start: number, end: number): Buffer;
  /** Bytes [start, end) anywhere, read back from the sink. */
  read(start: number, end: number): Promise<Buffer>;
}

export interface CallOutputOptions {
  capBytes: number;
  onText?: ((stream: OutputStream, text: string) => void) | undefined;
  spill?: OutputSpill | undefined;
  /** The sink of `stream` is behind (paused true) or caught up again (false): read its pipe accordingly. */
  onPressure?: (stream: OutputStream, paused: boolean) => void;
}

/** One stream of a call: whole chunks until it spills, then its head, the chunks of its tail, and counts. */
class StreamCapture {
  /** The whole stream while it is inline; after a spill, the last chunks (at least keptBytes of them). */
  chunks: Buffer[] = [];
  chunkBytes = 0;
  head: Buffer | undefined;
  sink: OutputSink | undefined;
  /** The spill had no sink for it: the stream stays whole in memory, as before spills. */
  refused = false;
  bytes = 0;
  chars = 0;
  newlines = 0;
  readonly decoder = new StringDecoder("utf8");
  /** The decoder holds no part of a character: an ASCII chunk is its own length in characters, undecoded. */
  decoderIdle = true;
}

/** Searches past this many line ends in a chunk cost more than reading its remaining bytes one by one. */
const DENSE_NEWLINES = 64;

/**
 * Line ends in `chunk`: found by search while they are few (memchr skips the bytes between them),
 * then by a plain pass over the rest, since a flood of empty lines made a search per line cost
 * the loop about 35 ns for each of its bytes.
 */
export function countNewlines(chunk: Buffer): number {
  let count = 0;
  for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
    if (++count < DENSE_NEWLINES) continue;
    for (let j = i + 1; j < chunk.length; j++) if (chunk[j] === 10) count++;
    break;
  }
  return count;
}

/** Whether `chunk` ends inside a UTF-8 character (a lead byte without all its continuation bytes). */
function endsMidCharacter(chunk: Buffer): boolean {
  for (let back = 1; back <= Math.min(3, chunk.length); back++) {
    const byte = chunk[chunk.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back;
  }
  return false;
}

export class CallOutput {
  private readonly streams: Record<OutputStream, StreamCapture> = { stdout: new StreamCapture(), stderr: new StreamCapture() };
  private bytes = 0;

  constructor(private readonly options: CallOutputOptions) {}

  /** Adds a chunk; false when it went over the cap (the part that fits is kept, not passed on). */
  push(stream: OutputStream, chunk: Buffer): boolean {
    this.bytes += chunk.length;
    if (this.bytes > this.options.capBytes) {
      const room = chunk.length - (this.bytes - this.options.capBytes);
      if (room > 0) this.keep(stream, chunk.subarray(0, room), false);
      return false;
    }
    this.keep(stream, chunk, true);
    return true;
  }

  private keep(stream: OutputStream, chunk: Buffer, passOn: boolean): void {
    const capture = this.streams[stream];
    capture.bytes += chunk.length;
    // Counted as it comes, a chunk at a time: a spilled stream is never joined or decoded whole.
    capture.newlines += countNewlines(chunk);
    const onText = passOn ? this.options.onText : undefined;
    if (!onText && capture.decoderIdle && isAscii(chunk)) {
      // Nothing to pass on: ASCII is counted, not decoded (decoding 10 MB costs the loop tens of ms).
      capture.chars += chunk.length;
    } else {
      const text = capture.decoder.write(chunk);
      capture.chars += text.length;
      // A chunk of fewer than 4 bytes may end a character begun before it: decoded again next time.
      capture.decoderIdle = chunk.length >= 4 && !endsMidCharacter(chunk);
      if (onText && text) onText(stream, text);
    }
    capture.chunks.push(chunk);
    capture.chunkBytes += chunk.length;
    const spill = this.options.spill;
    if (!capture.sink && spill && !capture.refused && capture.bytes > spill.inlineBytes) this.startSpill(stream, capture, spill);
    else if (capture.sink && spill) {
      this.write(stream, capture, chunk);
      this.trimTail(capture, spill.keptBytes);
    }
  }

  /** The stream outgrew its inline size: what it has so far goes to a sink, and only its ends stay. */
  private startSpill(stream: OutputStream, capture: StreamCapture, spill: OutputSpill): void {
    const sink = spill.open(stream);
    if (!sink) {
      capture.refused = true;
      return;
    }
    capture.sink = sink;
    const whole = Buffer.concat(capture.chunks);
    // A copy, so that the head does not pin the inline megabyte it was cut from.
    capture.head = Buffer.from(whole.subarray(0, spill.keptBytes));
    this.write(stream, capture, whole);
    capture.chunks = [whole.subarray(Math.max(0, whole.length - spill.keptBytes))];
    capture.chunkBytes = capture.chunks[0]!.length;
  }

  private write(stream: OutputStream, capture: StreamCapture, chunk: Buffer): void {
    if (capture.sink!.write(chunk)) return;
    this.options.onPressure?.(stream, true);
    capture.sink!.onDrain(() => this.options.onPressure?.(stream, false));
  }

  /** Drops whole chunks from the front while the rest still holds `keptBytes`. */
  private trimTail(capture: StreamCapture, keptBytes: number): void {
    let drop = 0;
    while (drop < capture.chunks.length - 1 && capture.chunkBytes - capture.chunks[drop]!.length >= keptBytes) capture.chunkBytes -= capture.chunks[drop++]!.length;
    if (drop > 0) capture.chunks.splice(0, drop);
  }

  /** Passes on what each decoder still holds (a character cut short at the end), and ends the sinks. */
  end(): void {
    for (const stream of ["stdout", "stderr"] as const) {
      const capture = this.streams[stream];
      const tail = capture.decoder.end();
      capture.chars += tail.length;
      if (tail && this.options.onText) this.options.onText(stream, tail);
      void capture.sink?.end();
    }
  }

  /** The whole stream, or nothing when it was spilled (see spilled). */
  bytesOf(stream: OutputStream): Buffer {
    const capture = this.streams[stream];
    return capture.sink ? Buffer.alloc(0) : Buffer.concat(capture.chunks);
  }

  /** The spilled stream, when it went past its inline size and a sink took it. */
  spilled(stream: OutputStream): SpilledStream | undefined {
    const capture = this.streams[stream];
    const sink = capture.sink;
    if (!sink || !capture.head) return undefined;
    const { bytes: length, chars, newlines } = capture;
    const keptBytes = capture.head.length;
    const joined = Buffer.concat(capture.chunks);
    const tail = joined.subarray(Math.max(0, joined.length - keptBytes));
    const head = capture.head;
    return {
      length,
      chars,
      newlines,
      keptBytes,
      ends(start, end) {
        if (end <= keptBytes) return head.subarray(start, end);
        const from = length - tail.length;
        if (start >= from) return tail.subarray(start - from, end - from);
        throw new Error(`bytes [${start}, ${end}) of a spilled stream of ${length} bytes are not kept in memory`);
      },
      read: (start, end) => sink.read(start, end),
    };
  }

  /** The last `maxBytes` of a stream as text, without joining all of it. */
  tail(stream: OutputStream, maxBytes: number): string {
    const picked: Buffer[] = [];
    let length = 0;
    const chunks = this.streams[stream].chunks;
    for (let i = chunks.length - 1; i >= 0 && length < maxBytes; i--) {
      picked.unshift(chunks[i]!);
      length += chunks[i]!.length;
    }
    const joined = Buffer.concat(picked);
    return joined.subarray(Math.max(0, joined.length - maxBytes)).toString("utf8");
  }
}
