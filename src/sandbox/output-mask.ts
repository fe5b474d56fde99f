// Masking of secret values in what a run gives back: its output bytes, the text streamed while
// it runs (a secret split across chunks included), its value and error, as "[masked:NAME]".

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

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export class OutputMask {
  private readonly names = new Map<string, string>();
  private readonly bytesNames = new Map<string, string>();
  private readonly textPattern: RegExp;
  private readonly bytesPattern: RegExp;
  private readonly values: string[];
  private readonly firstChars: Set<string>;

  private constructor(secrets: readonly SecretValue[]) {
    for (const { name, value } of secrets) {
      if (value.length < MIN_SECRET_LENGTH || this.names.has(value)) continue;
      this.names.set(value, name);
      this.bytesNames.set(Buffer.from(value, "utf8").toString("latin1"), name);
    }
    // Longest first, so that a secret containing another is masked whole; one pass, so that a
    // mask never gets masked again.
    this.values = [...this.names.keys()].sort((a, b) => b.length - a.length);
    this.textPattern = new RegExp(this.values.map(escapeRegExp).join("|"), "g");
    this.bytesPattern = new RegExp([...this.bytesNames.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp).join("|"), "g");
    this.firstChars = new Set(this.values.map((v) => v[0]!));
  }

  /** A mask of these values, or undefined when none is long enough to mask. */
  static of(secrets: readonly SecretValue[] | undefined): OutputMask | undefined {
    const mask = secrets && secrets.length > 0 ? new OutputMask(secrets) : undefined;
    return mask && mask.values.length > 0 ? mask : undefined;
  }

  text(text: string): string {
    return text.replace(this.textPattern, (found) => `[masked:${this.names.get(found) ?? "secret"}]`);
  }

  /** Bytes as they are except the UTF-8 of each secret (latin1 maps every byte to one character and back). */
  bytes(data: Buffer): Buffer {
    const raw = data.toString("latin1");
    const masked = raw.replace(this.bytesPattern, (found) => `[masked:${this.bytesNames.get(found) ?? "secret"}]`);
    return masked === raw ? data : Buffer.from(masked, "latin1");
  }

  /** A JSON-like value with every string (and object key) masked. */
  value(value: unknown, depth = 0): unknown {
    if (typeof value === "string") return this.text(value);
    if (typeof value !== "object" || value === null) return value;
    if (depth >= MAX_VALUE_DEPTH) return "[a value nested too deeply to check for secrets, not shown]";
    if (Array.isArray(value)) return value.map((item) => this.value(item, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [this.text(key), this.value(item, depth + 1)]));
  }

  /**
   * Where streamed `text` can be cut: everything before is passed on masked, the rest is held
   * until more comes. The cut is at the first character from which the rest could still grow
   * into a secret (a whole short secret too, when a longer one starts with it), moved past a
   * secret that straddles it; what is held is always shorter than the longest secret.
   */
  private cutPoint(text: string): number {
    const longest = this.values[0]!.length;
    let cut = text.length;
    for (let i = Math.max(0, text.length - longest + 1); i < text.length; i++) {
      if (!this.firstChars.has(text[i]!)) continue;
      const tail = text.slice(i);
      if (this.values.some((v) => v.length > tail.length && v.startsWith(tail))) {
        cut = i;
        break;
      }
    }
    if (cut === text.length) return cut;
    for (const match of text.matchAll(this.textPattern)) {
      const end = match.index + match[0].length;
      if (match.index < cut && end > cut) return end;
      if (match.index >= cut) break;
    }
    return cut;
  }

  /** Passes streamed text on masked; `flush` passes on what is held back once the streams end. */
  streaming<S extends string>(onText: (stream: S, text: string) => void): { push: (stream: S, text: string) => void; flush: () => void } {
    const pending = new Map<S, string>();
    return {
      push: (stream, text) => {
        const joined = (pending.get(stream) ?? "") + text;
        const cut = this.cutPoint(joined);
        pending.set(stream, joined.slice(cut));
        if (cut > 0) onText(stream, this.text(joined.slice(0, cut)));
      },
      flush: () => {
        for (const [stream, text] of pending) if (text) onText(stream, this.text(text));
        pending.clear();
      },
    };
  }
}

/** `outcome` with `mask` applied to everything it says: output bytes, value, error, message, images note. */
export function maskOutcome(outcome: RunOutcome, mask: OutputMask): RunOutcome {
  const { result } = outcome;
  return {
    ...outcome,
    stdout: mask.bytes(outcome.stdout),
    stderr: mask.bytes(outcome.stderr),
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
