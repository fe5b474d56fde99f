// The values a vault already holds, found again verbatim in any text: indexed by their first three
// characters and their lengths, so a scan costs one lookup per position however many values are known.

import type { PiiMatch } from "./types.js";

/** Characters of the index key; shorter values are left to the detectors (too short to find safely). */
const KEY_CHARS = 3;

/** The first three UTF-16 units at `i` as one number (exact: below 2^53), so no string is made per position. */
function keyAt(text: string, i: number): number {
  return text.charCodeAt(i) * 4294967296 + text.charCodeAt(i + 1) * 65536 + text.charCodeAt(i + 2);
}

export class KnownValues {
  /** Each value's kind. */
  private readonly types = new Map<string, string>();
  /** The distinct lengths of the values starting with each key, longest first. */
  private readonly lengths = new Map<number, number[]>();

  get size(): number {
    return this.types.size;
  }

  has(value: string): boolean {
    return this.types.has(value);
  }

  add(type: string, value: string): void {
    if (value.length < KEY_CHARS || this.types.has(value)) return;
    this.types.set(value, type);
    const key = keyAt(value, 0);
    const list = this.lengths.get(key);
    if (!list) {
      this.lengths.set(key, [value.length]);
      return;
    }
    if (list.includes(value.length)) return;
    const at = list.findIndex((length) => length < value.length);
    list.splice(at < 0 ? list.length : at, 0, value.length);
  }

  /** Every occurrence of a known value in `text`, left to right, longest first, never overlapping. */
  find(text: string): PiiMatch[] {
    const out: PiiMatch[] = [];
    if (this.types.size === 0) return out;
    const n = text.length;
    for (let i = 0; i <= n - KEY_CHARS; i++) {
      const list = this.lengths.get(keyAt(text, i));
      if (!list) continue;
      for (const length of list) {
        if (i + length > n) continue;
        const value = text.slice(i, i + length);
        const type = this.types.get(value);
        if (type === undefined) continue;
        out.push({ type, start: i, end: i + length, value });
        i += length - 1;
        break;
      }
    }
    return out;
  }
}
