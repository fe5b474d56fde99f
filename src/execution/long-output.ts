// Shaping of a stdout too long to decode and count in one piece on the event loop: only the head
// and tail a result can show are decoded; the lines between them and its tokens are counted in slices.

import { countNewlines, type SpilledStream } from "../sandbox/index.js";
import { cutText, type ShapedText, type TextWindows } from "./shaping.js";
import { countTokens } from "./tokens.js";

/**
 * A long output's bytes: all in memory, or a spilled stream (sandbox/call-output.ts) of which only
 * the ends are, its lines and characters counted as it came and the rest read back from its saved copy.
 */
export type LongBytes = Buffer | SpilledStream;

/** Bytes [start, end) of `data` that lie in memory (anywhere in a buffer; in a kept end of a spilled stream). */
export function bytesAt(data: LongBytes, start: number, end: number = data.length): Buffer {
  return Buffer.isBuffer(data) ? data.subarray(start, end) : data.ends(start, end);
}

function byteAt(data: LongBytes, index: number): number {
  return Buffer.isBuffer(data) ? (data[index] ?? 0) : (data.ends(index, index + 1)[0] ?? 0);
}

/** The whole of `data` as text; a spilled stream is read back from its saved copy (its ends alone if that fails). */
export async function wholeText(data: LongBytes): Promise<string> {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  try {
    return (await data.read(0, data.length)).toString("utf8");
  } catch {
    return `${data.ends(0, data.keptBytes).toString("utf8")}\n…\n${data.ends(data.length - data.keptBytes, data.length).toString("utf8")}`;
  }
}

/** Lets the event loop serve others between two slices of work. */
export type Pause = () => Promise<void>;

export const nextTurn: Pause = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Bytes decoded at each end, at least: a head or tail of the budget's tokens fits in far less (a
 * token is 16 characters at most in cutText's aim); an output under four windows is shaped whole.
 */
const WINDOW_BYTES = 256 * 1024;
/** Bytes decoded at each end of an output of `budget` tokens. */
function longWindowBytes(budget: number): number {
  return Math.max(WINDOW_BYTES, budget * 64);
}

/**
 * How much of a stream a call keeps in memory (OutputSpill): whole up to the size from which
 * shapeLongText shapes it from its ends, and then those ends (the display bytes' too), with
 * bytes to spare for finding the character starts around them.
 */
export function spillBounds(budget: number, displayBytes: number): { inlineBytes: number; keptBytes: number } {
  const window = longWindowBytes(budget);
  const keptBytes = Math.max(window, displayBytes) + 16;
  return { inlineBytes: Math.max(4 * window, 2 * keptBytes), keptBytes };
}

/** Bytes of the middle decoded between two turns (about a millisecond each). */
const SLICE_BYTES = 1 << 20;
/** Token samples of the estimate, and their size in bytes (as estimateTokens samples a string). */
const SAMPLES = 32;
const SAMPLE_BYTES = 4096;
const NEWLINE = 10;

/** The first index at or after `index` that starts a UTF-8 character (a continuation byte is 10xxxxxx). */
function charStart(data: LongBytes, index: number): number {
  let at = Math.max(0, Math.min(index, data.length));
  for (let back = 0; back < 3 && at < data.length && (byteAt(data, at) & 0xc0) === 0x80; back++) at++;
  return at;
}

/** Whether the output looks like one JSON document (then its structure is shaped, which needs all of it). */
function looksLikeJson(data: LongBytes): boolean {
  const nonSpace = (from: number, to: number, step: number): number => {
    for (let i = from; i !== to; i += step) if (!/\s/.test(String.fromCharCode(byteAt(data, i)))) return byteAt(data, i);
    return 0;
  };
  const first = String.fromCharCode(nonSpace(0, Math.min(1024, data.length), 1));
  const last = String.fromCharCode(nonSpace(data.length - 1, Math.max(-1, data.length - 1025), -1));
  return ["{}", "[]", '""'].includes(first + last);
}

/** A long output's decoded head and tail, and what lies between them counted. */
class SplitText implements TextWindows {
  readonly headChars: number;
  readonly tailFrom: number;

  constructor(
    private readonly head: string,
    private readonly tail: string,
    private readonly gap: { chars: number; newlines: number; lastChar: number },
  ) {
    this.headChars = head.length;
    this.tailFrom = head.length + gap.chars;
  }

  get length(): number {
    return this.tailFrom + this.tail.length;
  }

  slice(start: number, end: number = this.length): string {
    if (end <= this.headChars) return this.head.slice(start, end);
    if (start >= this.tailFrom) return this.tail.slice(start - this.tailFrom, end - this.tailFrom);
    throw new Error(`a slice [${start}, ${end}) of a long output reaches into its middle, which is not decoded`);
  }

  charCodeAt(index: number): number {
    if (index < this.headChars) return this.head.charCodeAt(index);
    if (index >= this.tailFrom) return this.tail.charCodeAt(index - this.tailFrom);
    return index === this.tailFrom - 1 ? this.gap.lastChar : NaN;
  }

  /** Of one character: the middle is searched only at its last character. */
  indexOf(char: string, position: number): number {
    if (position < this.headChars) {
      const found = this.head.indexOf(char, position);
      if (found !== -1) return found;
    }
    if (position < this.tailFrom && this.gap.lastChar === char.charCodeAt(0)) return this.tailFrom - 1;
    const found = this.tail.indexOf(char, Math.max(0, position - this.tailFrom));
    return found === -1 ? -1 : found + this.tailFrom;
  }

  lastIndexOf(char: string, position: number): number {
    if (position >= this.tailFrom) {
      const found = this.tail.lastIndexOf(char, position - this.tailFrom);
      if (found !== -1) return found + this.tailFrom;
    }
    return this.head.lastIndexOf(char, Math.max(0, Math.min(position, this.headChars - 1)));
  }

  newlines(from: number, to: number): number {
    let count = 0;
    for (let i = this.head.indexOf("\n", from); i !== -1 && i < Math.min(to, this.headChars); i = this.head.indexOf("\n", i + 1)) count++;
    if (from <= this.headChars && to >= this.tailFrom) count += this.gap.newlines;
    const end = to - this.tailFrom;
    for (let i = this.tail.indexOf("\n", Math.max(0, from - this.tailFrom)); i !== -1 && i < end; i = this.tail.indexOf("\n", i + 1)) count++;
    return count;
  }
}

/** Characters and line ends of data[from, to), decoded a slice at a time with a pause before each. */
async function countMiddle(data: Buffer, from: number, to: number, pause: Pause): Promise<{ chars: number; newlines: number; lastChar: number }> {
  let chars = 0;
  let newlines = 0;
  let lastChar = NaN;
  for (let at = from; at < to; ) {
    await pause();
    const end = to - at <= SLICE_BYTES ? to : charStart(data, at + SLICE_BYTES);
    const text = data.toString("utf8", at, end);
    chars += text.length;
    for (let i = data.indexOf(NEWLINE, at); i !== -1 && i < end; i = data.indexOf(NEWLINE, i + 1)) newlines++;
    if (text.length > 0) lastChar = text.charCodeAt(text.length - 1);
    at = end;
  }
  return { chars, newlines, lastChar };
}

/**
 * What lies between a spilled stream's decoded head and tail, from the counts of the whole stream:
 * nothing of the middle is decoded again.
 */
function spilledMiddle(data: SpilledStream, headEnd: number, tailStart: number, head: string, tail: string): { chars: number; newlines: number; lastChar: number } {
  let last = tailStart - 1;
  for (let back = 0; back < 3 && last > headEnd && (byteAt(data, last) & 0xc0) === 0x80; back++) last--;
  const lastText = data.ends(last, tailStart).toString("utf8");
  return {
    chars: data.chars - head.length - tail.length,
    newlines: data.newlines - countNewlines(data.ends(0, headEnd)) - countNewlines(data.ends(tailStart, data.length)),
    lastChar: lastText.length > 0 ? lastText.charCodeAt(lastText.length - 1) : NaN,
  };
}

/**
 * The sample of `data` from about `at`: SAMPLE_BYTES from the first character start there. A
 * spilled stream's is read back from its saved copy (with a few bytes more to find the character
 * starts); if that fails, only samples within its kept ends are taken (undefined for the others).
 */
async function sampleAt(data: LongBytes, at: number): Promise<string | undefined> {
  if (Buffer.isBuffer(data)) {
    const start = charStart(data, at);
    return data.toString("utf8", start, charStart(data, start + SAMPLE_BYTES));
  }
  let bytes: Buffer;
  try {
    bytes = await data.read(at, Math.min(data.length, at + SAMPLE_BYTES + 8));
  } catch {
    const end = Math.min(data.length, at + SAMPLE_BYTES + 8);
    if (end > data.keptBytes && at < data.length - data.keptBytes) return undefined;
    bytes = data.ends(at, end);
  }
  // Cut as charStart cuts the whole stream: the read reaches its end exactly when the stream does.
  const start = charStart(bytes, 0);
  return bytes.toString("utf8", start, charStart(bytes, start + SAMPLE_BYTES));
}

/**
 * Tokens of a long `data` (of `chars` characters once decoded; counted here when not given),
 * extrapolated from evenly spaced samples as estimateTokens does for a string, a pause before each.
 */
export async function estimateLongTokens(data: LongBytes, pause: Pause = nextTurn, chars?: number): Promise<number> {
  chars ??= Buffer.isBuffer(data) ? (await countMiddle(data, 0, data.length, pause)).chars : data.chars;
  const stride = Math.floor((data.length - SAMPLE_BYTES) / (SAMPLES - 1));
  let sampled = 0;
  let tokens = 0;
  for (let i = 0; i < SAMPLES; i++) {
    await pause();
    const piece = await sampleAt(data, i * stride);
    if (piece === undefined) continue;
    sampled += piece.length;
    tokens += countTokens(piece);
  }
  return Math.round((tokens / Math.max(1, sampled)) * chars);
}

/**
 * `data` shortened to `budget` tokens as shapeText shortens text (its head and tail around a marker
 * line, with an estimate of its tokens), doing no more than a slice of work between two pauses.
 * Undefined when the output is not long enough for that, or is one JSON document, or its estimate is
 * near the budget (the exact count needs the whole text): the caller shapes it whole.
 */
export async function shapeLongText(data: LongBytes, budget: number, pause: Pause = nextTurn): Promise<ShapedText | undefined> {
  const window = longWindowBytes(budget);
  if (data.length < 4 * window || looksLikeJson(data)) return undefined;
  const headEnd = charStart(data, window);
  const tailStart = charStart(data, data.length - window);
  const head = bytesAt(data, 0, headEnd).toString("utf8");
  const tail = bytesAt(data, tailStart).toString("utf8");
  const gap = Buffer.isBuffer(data) ? await countMiddle(data, headEnd, tailStart, pause) : spilledMiddle(data, headEnd, tailStart, head, tail);
  const text = new SplitText(head, tail, gap);
  const tokens = await estimateLongTokens(data, pause, text.length);
  if (tokens <= budget * 2) return undefined;
  await pause();
  return cutText(text, budget, { tokens, exact: false });
}
