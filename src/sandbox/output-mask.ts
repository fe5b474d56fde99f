// Masking of secret values in what a run gives back: its output bytes as they come (a secret split
// across chunks included; what is streamed is decoded from them), its value and error, as "[masked:NAME]".

import type { RunOutcome } from "./sandbox.js";

/** A value to mask and the name it is shown as. */
export interface SecretValue {
  name: string;
  value: string;
}

/** Values shorter than this are not masked: hiding every "1" or "on" hides more than it protects. */
const MIN_SECRET_LENGTH = 4;
/** Deeper than this a value is not walked; result building replaces such a value anyway. */
const MAX_VALUE_DEPTH = 300;

/** Where the earliest of `values` occurs in `text` at or after `from` (the first listed wins a tie), or undefined. */
function nextMatch(text: string, values: readonly string[], from: number, next: number[]): { at: number; index: number } | undefined {
  let best: { at: number; index: number } | undefined;
  values.forEach((value, index) => {
    // next[index] caches the value's next occurrence; -1 once there is none, and it is found again only when passed.
    if (next[index]! !== -1 && next[index]! < from) next[index] = text.indexOf(value, from);
    const at = next[index]!;
    if (at >= 0 && (best === undefined || at < best.at)) best = { at, index };
  });
  return best;
}

/**
 * `text` with every occurrence of `values` replaced, scanning left to right and taking at each
 * place the first value listed that occurs there (as a regular expression of alternatives would,
 * without one: a pattern of many or long secrets is too large for one). One pass: a replacement is never looked at again.
 */
function replaceValues(text: string, values: readonly string[], replacement: (index: number) => string): string {
  if (values.length === 0) return text;
  const next = values.map(() => -2);
  let out = "";
  let pos = 0;
  for (let found = nextMatch(text, values, 0, next); found; found = nextMatch(text, values, pos, next)) {
    out += text.slice(pos, found.at) + replacement(found.index);
    pos = found.at + values[found.index]!.length;
  }
  return pos === 0 ? text : out + text.slice(pos);
}

/** KMP failure table of `value`: for each prefix length i+1, the length of its longest proper border. */
function borders(value: string): Int32Array {
  const fail = new Int32Array(value.length);
  for (let i = 1, k = 0; i < value.length; i++) {
    while (k > 0 && value[i] !== value[k]) k = fail[k - 1]!;
    if (value[i] === value[k]) k++;
    fail[i] = k;
  }
  return fail;
}

export class OutputMask {
  private readonly names = new Map<string, string>();
  private readonly bytesNames = new Map<string, string>();
  private readonly values: string[];
  private readonly bytesValues: string[];
  private readonly bytesFails: Int32Array[];

  private constructor(secrets: readonly SecretValue[]) {
    for (const { name, value } of secrets) {
      if (value.length < MIN_SECRET_LENGTH || this.names.has(value)) continue;
      this.names.set(value, name);
      this.bytesNames.set(Buffer.from(value, "utf8").toString("latin1"), name);
    }
    // Longest first, so that a secret containing another is masked whole; one pass, so that a
    // mask never gets masked again.
    this.values = [...this.names.keys()].sort((a, b) => b.length - a.length);
    this.bytesValues = [...this.bytesNames.keys()].sort((a, b) => b.length - a.length);
    this.bytesFails = this.bytesValues.map(borders);
  }

  /** A mask of these values, or undefined when none is long enough to mask. */
  static of(secrets: readonly SecretValue[] | undefined): OutputMask | undefined {
    const mask = secrets && secrets.length > 0 ? new OutputMask(secrets) : undefined;
    return mask && mask.values.length > 0 ? mask : undefined;
  }

  text(text: string): string {
    return replaceValues(text, this.values, (i) => `[masked:${this.names.get(this.values[i]!) ?? "secret"}]`);
  }

  /** Bytes as they are except the UTF-8 of each secret (latin1 maps every byte to one character and back). */
  bytes(data: Buffer): Buffer {
    const raw = data.toString("latin1");
    const masked = this.latin1(raw);
    return masked === raw ? data : Buffer.from(masked, "latin1");
  }

  /** Bytes as latin1 text, masked. */
  private latin1(raw: string): string {
    return replaceValues(raw, this.bytesValues, (i) => `[masked:${this.bytesNames.get(this.bytesValues[i]!) ?? "secret"}]`);
  }

  /** A JSON-like value with every string (and object key) masked. */
  value(value: unknown, depth = 0): unknown {
    if (typeof value === "string") return this.text(value);
    if (typeof value !== "object" || value === null) return value;
    if (depth >= MAX_VALUE_DEPTH) return "[a value nested too deeply to check for secrets, not shown]";
    if (Array.isArray(value)) return value.map((item) => this.value(item, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [this.text(key), this.value(item, depth + 1)]));
  }

  /** The longest end of `text` that is the start of `value` but not all of it (KMP over at most value.length - 1 characters). */
  private static heldFor(text: string, value: string, fail: Int32Array): number {
    let k = 0;
    for (let i = Math.max(0, text.length - value.length + 1); i < text.length; i++) {
      while (k > 0 && text[i] !== value[k]) k = fail[k - 1]!;
      if (text[i] === value[k]) k++;
      if (k === value.length) k = fail[k - 1]!;
    }
    return k;
  }

  /**
   * Where streamed `text` can be cut: everything before is passed on masked, the rest is held
   * until more comes. The cut is at the first character from which the rest could still grow
   * into a secret (a whole short secret too, when a longer one starts with it), moved past a
   * secret that straddles it; what is held is always shorter than the longest secret.
   */
  private static cutPoint(text: string, values: readonly string[], fails: readonly Int32Array[]): number {
    let held = 0;
    for (let i = 0; i < values.length; i++) held = Math.max(held, OutputMask.heldFor(text, values[i]!, fails[i]!));
    const cut = text.length - held;
    if (held === 0) return cut;
    const next = values.map(() => -2);
    let pos = 0;
    for (let found = nextMatch(text, values, 0, next); found && found.at < cut; found = nextMatch(text, values, pos, next)) {
      pos = found.at + values[found.index]!.length;
      if (pos > cut) return pos;
    }
    return cut;
  }

  /**
   * Masks a byte stream as it comes, as bytes() would mask all of it at once: a secret split
   * across chunks is held back until whole. Each chunk costs its own length plus the longest secret.
   */
  streamingBytes(): { push: (chunk: Buffer) => Buffer; flush: () => Buffer } {
    let pending = "";
    return {
      push: (chunk) => {
        const held = pending.length;
        const joined = pending + chunk.toString("latin1");
        const cut = OutputMask.cutPoint(joined, this.bytesValues, this.bytesFails);
        pending = joined.slice(cut);
        const ready = joined.slice(0, cut);
        const masked = this.latin1(ready);
        // Nothing held before, nothing held now, nothing masked: the chunk itself, not a copy.
        return held === 0 && cut === joined.length && masked === ready ? chunk : Buffer.from(masked, "latin1");
      },
      flush: () => {
        const rest = pending;
        pending = "";
        return this.bytes(Buffer.from(rest, "latin1"));
      },
    };
  }
}

/**
 * `outcome` with `mask` applied to everything else it says: value, error, message, images note.
 * Its output bytes were masked as they came (streamingBytes), before they were kept or saved.
 */
export function maskOutcome(outcome: RunOutcome, mask: OutputMask): RunOutcome {
  const { result } = outcome;
  return {
    ...outcome,
    ...(outcome.message === undefined ? {} : { message: mask.text(outcome.message) }),
    // The note quotes what code sent as an image's type.
    ...(outcome.imagesNote === undefined ? {} : { imagesNote: mask.text(outcome.imagesNote) }),
    ...(result
      ? {
          result: {
            ...result,
            ...(result.value === undefined ? {} : { value: mask.value(result.value) }),
            ...(result.error ? { error: { type: mask.text(result.error.type), message: mask.text(result.error.message), traceback: mask.text(result.error.traceback) } } : {}),
          },
        }
      : {}),
  };
}
