// Shaping of a stdout too long to decode and count in one piece on the event loop: only the head
// and tail a result can show are decoded; the lines between them and its tokens are counted in slices.

import { cutText, type ShapedText, type TextWindows } from "./shaping.js";
import { countTokens } from "./tokens.js";

/** Lets the event loop serve others between two slices of work. */
export type Pause = () => Promise<void>;

export const nextTurn: Pause = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Bytes decoded at each end, at least: a head or tail of the budget's tokens fits in far less (a
 * token is 16 characters at most in cutText's aim); an output under four windows is shaped whole.
 */
const WINDOW_BYTES = 256 * 1024;
/** Bytes of the middle decoded between two turns (about a millisecond each). */
const SLICE_BYTES = 1 << 20;
/** Token samples of the estimate, and their size in bytes (as estimateTokens samples a string). */
const SAMPLES = 32;
const SAMPLE_BYTES = 4096;
const NEWLINE = 10;

/** The first index at or after `index` that starts a UTF-8 character (a continuation byte is 10xxxxxx). */
function charStart(data: Buffer, index: number): number {
  let at = Math.max(0, Math.min(index, data.length));
  for (let back = 0; back < 3 && at < data.length && ((data[at] ?? 0) & 0xc0) === 0x80; back++) at++;
  return at;
}

/** Whether the output looks like one JSON document (then its structure is shaped, which needs all of it). */
function looksLikeJson(data: Buffer): boolean {
  const nonSpace = (from: number, to: number, step: number): number => {
    for (let i = from; i !== to; i += step) if (!/\s/.test(String.fromCharCode(data[i] ?? 32))) return data[i] ?? 0;
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
 * Tokens of a long `data` (of `chars` characters once decoded; counted here when not given),
 * extrapolated from evenly spaced samples as estimateTokens does for a string, a pause before each.
 */
export async function estimateLongTokens(data: Buffer, pause: Pause = nextTurn, chars?: number): Promise<number> {
  chars ??= (await countMiddle(data, 0, data.length, pause)).chars;
  const stride = Math.floor((data.length - SAMPLE_BYTES) / (SAMPLES - 1));
  let sampled = 0;
  let tokens = 0;
  for (let i = 0; i < SAMPLES; i++) {
    await pause();
    const start = charStart(data, i * stride);
    const piece = data.toString("utf8", start, charStart(data, start + SAMPLE_BYTES));
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
export async function shapeLongText(data: Buffer, budget: number, pause: Pause = nextTurn): Promise<ShapedText | undefined> {
  const window = Math.max(WINDOW_BYTES, budget * 64);
  if (data.length < 4 * window || looksLikeJson(data)) return undefined;
  const headEnd = charStart(data, window);
  const tailStart = charStart(data, data.length - window);
  const head = data.toString("utf8", 0, headEnd);
  const tail = data.toString("utf8", tailStart);
  const gap = await countMiddle(data, headEnd, tailStart, pause);
  const text = new SplitText(head, tail, gap);
  const tokens = await estimateLongTokens(data, pause, text.length);
  if (tokens <= budget * 2) return undefined;
  await pause();
  return cutText(text, budget, { tokens, exact: false });
}
