// Token counting with the o200k_base encoding (GPT-4o, GPT-5, o-series), loaded on first use:
// its rank table is megabytes of JavaScript that a process should not parse until it counts.

import { createRequire } from "node:module";
import type * as O200kBase from "gpt-tokenizer/encoding/o200k_base";

type Encoding = typeof O200kBase;

let encoding: Encoding | undefined;

/**
 * A synchronous `require` of the package's CommonJS build keeps `countTokens` synchronous and
 * still defers the cost; only the o200k_base module is loaded, never the default cl100k one.
 */
function encoder(): Encoding {
  encoding ??= createRequire(import.meta.url)("gpt-tokenizer/encoding/o200k_base") as Encoding;
  return encoding;
}

/**
 * Loads the encoder now (it takes a couple of hundred milliseconds), e.g. right after start-up,
 * and counts once: the first count builds the encoder's own tables (another 15 ms or so).
 */
export function warmTokenizer(): void {
  encoder().countTokens("warm up: 1 + 1 == 2\n", PLAIN_TEXT);
}

/** Whether the encoder is loaded already, so that counting costs no load. */
export function tokenizerLoaded(): boolean {
  return encoding !== undefined;
}

/** Forgets the loaded encoder, for tests of when it is loaded in a process that loaded it before (require keeps the module, so loading it again is quick). */
export function forgetTokenizer(): void {
  encoding = undefined;
}

/** Tool output is data, not a prompt: text such as `<|endoftext|>` counts as ordinary characters. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Byte-pair encoding costs the square of a pre-token's length, so 100,000 letters in a row take
 * seconds. Runs longer than this many code units of one character class are counted in slices:
 * exact everywhere else, within about a token per slice on such runs.
 */
const RUN_SLICE = 128;
const LONG_RUN = /[^\s\p{L}\p{M}\p{N}]{129,}|[\p{L}\p{M}]{129,}|\s{129,}/gu;

/**
 * The library's merge cache is a Map used as an LRU; once full, every eviction scans the deleted
 * entries at its front and counting slows down several times over. Big texts are therefore
 * counted in chunks, with the cache emptied every CLEAR_EVERY characters, before it fills.
 */
const CHUNK = 1 << 17;
const CLEAR_EVERY = 1 << 18;
let countedSinceClear = 0;

/** Moves a cut index back by one where it would split a surrogate pair. */
export function safeCut(text: { readonly length: number; charCodeAt(index: number): number }, index: number): number {
  if (index <= 0 || index >= text.length) return Math.max(0, Math.min(index, text.length));
  const before = text.charCodeAt(index - 1);
  const at = text.charCodeAt(index);
  return before >= 0xd800 && before <= 0xdbff && at >= 0xdc00 && at <= 0xdfff ? index - 1 : index;
}

function countSlice(enc: Encoding, text: string): number {
  countedSinceClear += text.length;
  if (countedSinceClear > CLEAR_EVERY) {
    enc.clearMergeCache();
    countedSinceClear = text.length;
  }
  return enc.countTokens(text, PLAIN_TEXT);
}

/**
 * Counts text without long runs in chunks that end before a space following a non-space: no
 * o200k pre-token spans such a point, so the sum is exact. Without one nearby, it cuts anyway.
 */
function countChunked(enc: Encoding, text: string, from: number, to: number): number {
  let count = 0;
  while (to - from > CHUNK) {
    const window = text.slice(from + CHUNK, from + CHUNK + 4096);
    const space = /\S /.exec(window);
    const cut = safeCut(text, from + CHUNK + (space ? space.index + 1 : 0));
    count += countSlice(enc, text.slice(from, cut));
    from = cut;
  }
  return from < to ? count + countSlice(enc, text.slice(from, to)) : count;
}

/** Exact o200k_base token count of `text` (see RUN_SLICE for the one exception). */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  const enc = encoder();
  if (text.length <= RUN_SLICE) return countSlice(enc, text);
  let count = 0;
  let position = 0;
  for (const match of text.matchAll(LONG_RUN)) {
    const start = match.index;
    const end = start + match[0].length;
    count += countChunked(enc, text, position, start);
    for (let from = start; from < end; ) {
      let to = safeCut(text, Math.min(end, from + RUN_SLICE));
      if (to <= from) to = Math.min(end, from + 2);
      count += countSlice(enc, text.slice(from, to));
      from = to;
    }
    position = end;
  }
  return count + countChunked(enc, text, position, text.length);
}

/**
 * Token count of a text that may be too big to count in time (base64 counts at under 1 MB/s):
 * exact up to 256 Ki characters, above that extrapolated from 32 evenly spaced 4 KiB samples.
 */
export function estimateTokens(text: string): { tokens: number; exact: boolean } {
  const samples = 32;
  const size = 4096;
  if (text.length <= 1 << 18) return { tokens: countTokens(text), exact: true };
  let sampled = 0;
  let tokens = 0;
  const stride = Math.floor((text.length - size) / (samples - 1));
  for (let i = 0; i < samples; i++) {
    const start = safeCut(text, i * stride);
    const piece = text.slice(start, safeCut(text, start + size));
    sampled += piece.length;
    tokens += countTokens(piece);
  }
  return { tokens: Math.round((tokens / sampled) * text.length), exact: false };
}

/** Tokens of `JSON.stringify(value)`; a string counts as its own text, not as a quoted literal. */
export function countJsonTokens(value: unknown): number {
  if (typeof value === "string") return countTokens(value);
  return countTokens(jsonText(value) ?? "");
}

/**
 * `JSON.stringify` that does not throw: bigints become strings and a repeated object becomes
 * "[Circular]" (shared references are rare in tool results and only cost a little accuracy).
 */
export function jsonText(value: unknown, indent?: string): string | undefined {
  try {
    return JSON.stringify(value, null, indent);
  } catch {
    const seen = new WeakSet<object>();
    try {
      return JSON.stringify(
        value,
        (_key, item: unknown) => {
          if (typeof item === "bigint") return item.toString();
          if (typeof item === "object" && item !== null) {
            if (seen.has(item)) return "[Circular]";
            seen.add(item);
          }
          return item;
        },
        indent,
      );
    } catch {
      return undefined;
    }
  }
}

/** Like countJsonTokens, but sampled above 256 Ki characters: for accounting of values of any size. */
export function estimateJsonTokens(value: unknown): number {
  if (value === undefined) return 0;
  return estimateTokens(typeof value === "string" ? value : (jsonText(value) ?? "")).tokens;
}
