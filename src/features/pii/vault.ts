// One session's PII vault: stable tokens for the values found in what crossed to the agent, and the
// way back for tokens the agent's code passes to a tool. It lives host-side and dies with its session.

import { SandgateError } from "../../errors/index.js";
import { detectPii } from "./detect.js";
import { ownString } from "./own-string.js";
import type { DetectOptions, PiiEntity, PiiMatch } from "./types.js";

/**
 * Characters the values swapped back for tokens may add to one tool call's arguments: a frame of a
 * million tokens naming a long value would otherwise make hundreds of megabytes on the host.
 */
export const MAX_DETOKENIZED_GROWTH = 4 * 1024 * 1024;

/** `[EMAIL_1]`: the kind in capitals and a number counted per kind, per vault. */
const TOKEN = /\[([A-Z][A-Z0-9_]{0,39})_([1-9][0-9]{0,8})\]/g;

export function tokenLabel(type: string): string {
  return type.toUpperCase().replace(/[^A-Z0-9_]/g, "_");
}

export interface Tokenized {
  text: string;
  /** In input order; offsets in code points of the input text. */
  entities: PiiEntity[];
  /** Replacements per kind (for the audit, which never keeps values). */
  counts: Record<string, number>;
}

export class PiiVault {
  private readonly byValue = new Map<string, string>();
  private readonly byToken = new Map<string, string>();
  private readonly perLabel = new Map<string, number>();

  /** How many distinct values the vault holds. */
  get size(): number {
    return this.byValue.size;
  }

  /**
   * The token of `value` as `type`: the same value always gets the same token in this vault. A new
   * token skips the numbers whose literal text is in `taken` (tokens already written in the input),
   * so that the way back never turns a literal `[EMAIL_1]` of the input into a value.
   */
  tokenFor(type: string, found: string, taken?: Pick<ReadonlySet<string>, "has">): string {
    const known = this.byValue.get(`${type}\u0000${found}`);
    if (known !== undefined) return known;
    const value = ownString(found);
    const key = `${type}\u0000${value}`;
    const label = tokenLabel(type);
    let n = this.perLabel.get(label) ?? 0;
    let token: string;
    do {
      n++;
      token = `[${label}_${n}]`;
    } while (taken?.has(token));
    this.perLabel.set(label, n);
    this.byValue.set(key, token);
    this.byToken.set(token, value);
    return token;
  }

  /** The real value behind a token this vault issued, else undefined. */
  valueOf(token: string): string | undefined {
    return this.byToken.get(token);
  }

  /** `token` no longer goes back to its value (its value keeps the token on the way out). */
  withdraw(token: string): void {
    this.byToken.delete(token);
  }

  /** Finds the kinds in `options` in `text` and replaces each value with its token. */
  tokenize(text: string, options: DetectOptions): Tokenized {
    return this.replace(text, detectPii(text, options));
  }

  /** Replaces the given matches (sorted, not overlapping) with tokens. */
  replace(text: string, matches: readonly PiiMatch[]): Tokenized {
    const entities: PiiEntity[] = [];
    const counts: Record<string, number> = {};
    let out = "";
    let at = 0;
    let codePoints = 0;
    const taken = matches.length > 0 && text.includes("[") ? new Set(text.match(TOKEN)) : undefined;
    for (const match of matches) {
      if (match.start < at) continue;
      codePoints += countCodePoints(text, at, match.start);
      const start = codePoints;
      codePoints += countCodePoints(text, match.start, match.end);
      const token = this.tokenFor(match.type, match.value, taken);
      out += text.slice(at, match.start) + token;
      at = match.end;
      entities.push({ type: match.type, token, start, end: codePoints });
      counts[match.type] = (counts[match.type] ?? 0) + 1;
    }
    return { text: out + text.slice(at), entities, counts };
  }

  /** Every string in `value` with the tokens this vault issued swapped back for their values; other text untouched. */
  detokenize<T>(value: T): T {
    if (this.byToken.size === 0) return value;
    return this.walk(value, { left: MAX_DETOKENIZED_GROWTH }) as T;
  }

  detokenizeText(text: string): string {
    if (this.byToken.size === 0) return text;
    return this.swapBack(text, { left: MAX_DETOKENIZED_GROWTH });
  }

  /** `text` with this vault's tokens swapped back; what the values add is taken from `growth`. */
  private swapBack(text: string, growth: { left: number }): string {
    if (!text.includes("[")) return text;
    return text.replace(TOKEN, (token) => {
      const value = this.byToken.get(token);
      if (value === undefined) return token;
      growth.left -= value.length - token.length;
      if (growth.left < 0) {
        throw new SandgateError("LIMIT_EXCEEDED", `the arguments with their tokens swapped back for the real values would grow by more than ${MAX_DETOKENIZED_GROWTH / 1048576} MiB; pass fewer tokens per call`);
      }
      return value;
    });
  }

  private walk(value: unknown, growth: { left: number }): unknown {
    if (typeof value === "string") return this.swapBack(value, growth);
    if (Array.isArray(value)) return value.map((item) => this.walk(item, growth));
    if (value !== null && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) out[this.swapBack(key, growth)] = this.walk(item, growth);
      return out;
    }
    return value;
  }
}

function countCodePoints(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}
