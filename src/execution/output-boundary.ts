// One execution's output on its way to the agent through code mode's OutputGuard: streamed chunks
// held to line ends (a value split across two chunks is still caught), the run's outcome, its tool calls.

import type { OutputStream, RunImage, RunOutcome } from "../sandbox/index.js";
import { encodeText, sniffEncoding, textDecoder } from "./text-encoding.js";
import type { OutputGuard, UpstreamCallSummary } from "./upstream-call-scope.js";

/** Text held back without a line end before it is passed on anyway, characters... */
const HOLD_CHARS = 4096;
/** ...except its last characters, which may be the start of a value. */
const TAIL_CHARS = 256;
/** A line is cut past this many characters held even inside what looks like one value. */
const MAX_HOLD_CHARS = 65_536;
/**
 * Characters scanned before the caller waits for its next turn (guard.turn): detectors run at a
 * few MB/s, so 10 MB in one go held the event loop for seconds and every other client with it.
 */
const SLICE_CHARS = 16_384;
/** Bytes of a stream decoded and scanned as one string (a millisecond or two of decoding). */
const PART_BYTES = 1 << 20;
/** Levels of a result value walked (the result shows 256 at most); what nests deeper is not shown. */
const MAX_VALUE_DEPTH = 300;

type Emit = (stream: OutputStream, text: string) => void;

export class OutputBoundary {
  private readonly pending: Record<OutputStream, string> = { stdout: "", stderr: "" };
  private emit: Emit | undefined;
  /** Streamed text still being scanned, in order: it is passed on in the order it came. */
  private work: Promise<void> = Promise.resolve();
  private queued = 0;
  /** Characters scanned since the last turn. */
  private scanned = 0;

  constructor(private readonly guard: OutputGuard) {}

  /** Whether anything is tokenized: before a tool result (or a session's known values) output passes as it is. */
  get active(): boolean {
    return this.guard.active;
  }

  /** `onOutput` receiving guarded text; await flush() (or outcome()) when the run ends. */
  stream(onOutput: Emit): Emit {
    this.emit = onOutput;
    return (stream, text) => {
      // Nothing known yet and nothing held: output before the first tool result passes at once.
      if (!this.guard.active && this.queued === 0 && this.pending[stream] === "") {
        onOutput(stream, text);
        return;
      }
      this.queued++;
      this.work = this.work.then(() => this.take(stream, text)).finally(() => this.queued--);
    };
  }

  /** Resolves when everything streamed so far was passed on (or held back for a line end). */
  settled(): Promise<void> {
    return this.work;
  }

  private async take(stream: OutputStream, text: string): Promise<void> {
    const held = this.pending[stream] + text;
    let cut = held.lastIndexOf("\n") + 1;
    if (cut === 0 && held.length > HOLD_CHARS) cut = this.longLineCut(held);
    this.pending[stream] = held.slice(cut);
    if (cut > 0) this.pass(stream, await this.scan(held.slice(0, cut), false));
  }

  /** Hands text on; a consumer that fails (a client gone) gets nothing more, the scan goes on. */
  private pass(stream: OutputStream, text: string): void {
    try {
      this.emit?.(stream, text);
    } catch {
      this.emit = undefined;
    }
  }

  /**
   * Where a long line without a line end is cut to pass its head on: before its last characters, and
   * never inside a value (two halves would each pass untokenized) nor a surrogate pair; past
   * MAX_HOLD_CHARS the cut is made anyway, so a stream is never held without bound. Only the last
   * SLICE_CHARS before the cut are looked at: a chunk of a megabyte is not scanned twice in one go.
   */
  private longLineCut(held: string): number {
    let cut = held.length - TAIL_CHARS;
    const from = Math.max(0, cut - SLICE_CHARS);
    const safe = from + (this.guard.cutBefore?.(held.slice(from), cut - from) ?? cut - from);
    if (safe > from) cut = safe;
    else if (held.length <= MAX_HOLD_CHARS) return 0;
    const unit = held.charCodeAt(cut - 1);
    if (unit >= 0xd800 && unit <= 0xdbff) cut--;
    return cut;
  }

  /**
   * `text` as guard.text makes it, scanned in slices of SLICE_CHARS cut at line ends (or where no
   * value spans), with a turn of the event loop between two slices: one caller's 10 MB waits its turn.
   */
  async scan(text: string, count: boolean): Promise<string> {
    if (this.scanned + text.length <= SLICE_CHARS) {
      this.scanned += text.length;
      return this.guard.text(text, count);
    }
    const parts: string[] = [];
    for (let at = 0; at < text.length; ) {
      await this.turn();
      const end = this.sliceEnd(text, at);
      parts.push(this.guard.text(text.slice(at, end), count));
      this.scanned = end - at;
      at = end;
    }
    return parts.join("");
  }

  private async turn(): Promise<void> {
    this.scanned = 0;
    if (this.guard.turn) await this.guard.turn();
    else await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /** The end of the slice from `at`: after its last line end in its second half, else where no value spans. */
  private sliceEnd(text: string, at: number): number {
    const end = at + SLICE_CHARS;
    if (end >= text.length) return text.length;
    const line = text.lastIndexOf("\n", end - 1) + 1;
    if (line > at + SLICE_CHARS / 2) return line;
    const window = text.slice(at, Math.min(text.length, end + TAIL_CHARS));
    const safe = at + (this.guard.cutBefore?.(window, end - at) ?? end - at);
    let cut = safe > at ? safe : end;
    const unit = text.charCodeAt(cut - 1);
    if (unit >= 0xd800 && unit <= 0xdbff) cut--;
    return cut;
  }

  /** Passes on what is still held, after what is being scanned. */
  async flush(): Promise<void> {
    this.work = this.work.then(async () => {
      for (const stream of ["stdout", "stderr"] as const) {
        const held = this.pending[stream];
        if (held === "") continue;
        this.pending[stream] = "";
        this.pass(stream, this.guard.active ? await this.scan(held, false) : held);
      }
    });
    await this.work;
  }

  /** The run's outcome as the agent may see it: streams, value, error (bytes kept where nothing changed). */
  async outcome(outcome: RunOutcome): Promise<RunOutcome> {
    await this.flush();
    if (!this.guard.active) return outcome;
    const out: RunOutcome = { ...outcome, stdout: await this.bytes(outcome.stdout), stderr: await this.bytes(outcome.stderr) };
    if (outcome.message !== undefined) out.message = await this.scan(outcome.message, true);
    // The code names what it passes as an image: a refused type or an SVG's text may be tool data.
    if (outcome.imagesNote !== undefined) out.imagesNote = await this.scan(outcome.imagesNote, true);
    if (outcome.images) {
      const images: RunImage[] = [];
      for (const image of outcome.images) images.push(image.mime === "image/svg+xml" ? await this.svg(image) : image);
      out.images = images;
    }
    const frame = outcome.result;
    if (frame) {
      out.result = { ...frame };
      if (frame.value !== undefined) out.result.value = await this.value(frame.value, 0);
      // The type too: code may name an exception class from tool data.
      if (frame.error) out.result.error = { ...frame.error, type: await this.scan(frame.error.type, true), message: await this.scan(frame.error.message, true), traceback: await this.scan(frame.error.traceback, true) };
    }
    return out;
  }

  /** Tool-call records with their error messages and tool ids guarded (code may build an id from tool data). */
  summary(summary: UpstreamCallSummary | undefined): UpstreamCallSummary | undefined {
    if (!summary || !this.guard.active) return summary;
    return {
      ...summary,
      calls: summary.calls.map((c) => ({ ...c, tool: this.guard.text(c.tool, true), ...(c.error === undefined ? {} : { error: this.guard.text(c.error, true) }) })),
    };
  }

  /** Replacements per kind, or undefined when there were none. */
  counts(): Record<string, number> | undefined {
    const counts = this.guard.counts();
    return Object.keys(counts).length > 0 ? counts : undefined;
  }

  /** Every string of `value` (keys too) scanned as scan() does, so a result of many strings takes turns too. */
  private async value(value: unknown, depth: number): Promise<unknown> {
    if (typeof value === "string") return this.scan(value, true);
    if (typeof value !== "object" || value === null) return this.guard.value(value);
    if (depth >= MAX_VALUE_DEPTH) return "[a value nested too deeply to check for personal data, not shown]";
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (const item of value) out.push(await this.value(item, depth + 1));
      return out;
    }
    const out: Record<string, unknown> = {};
    // defineProperty: a key named __proto__ stays a key instead of setting the object's prototype.
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(out, await this.scan(key, true), { value: await this.value(item, depth + 1), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }

  /** An SVG image is text a model reads: tokenized like output (its markup holds no values to break). */
  private async svg(image: RunImage): Promise<RunImage> {
    const data = Buffer.from(image.dataBase64, "base64");
    // In the encoding it was written in; not UTF-8: byte for byte (latin1), so the bytes around a value come back as they were.
    const sniffed = sniffEncoding(data, true);
    const encoding = sniffed === "binary" ? "latin1" : sniffed;
    const text = textDecoder(encoding)(data, true);
    const guarded = await this.scan(text, true);
    return guarded === text ? image : { ...image, dataBase64: encodeText(guarded, encoding).toString("base64") };
  }

  /**
   * A stream's bytes as guard.text makes them, decoded and encoded again a part of about
   * PART_BYTES at a time, cut after a line end (scan cuts there too): 10 MB are never turned into
   * one string and back in one go. A part without a line end runs to the next one.
   */
  private async bytes(data: Buffer): Promise<Buffer> {
    const parts: Buffer[] = [];
    let changed = false;
    for (let at = 0; at < data.length; ) {
      const newline = data.length - at <= PART_BYTES ? -1 : data.lastIndexOf(0x0a, at + PART_BYTES - 1);
      const after = newline >= at ? newline : data.indexOf(0x0a, at + PART_BYTES);
      const end = after === -1 ? data.length : after + 1;
      const text = data.toString("utf8", at, end);
      const guarded = await this.scan(text, true);
      changed ||= guarded !== text;
      parts.push(guarded === text ? data.subarray(at, end) : Buffer.from(guarded, "utf8"));
      at = end;
    }
    return changed ? Buffer.concat(parts) : data;
  }
}
