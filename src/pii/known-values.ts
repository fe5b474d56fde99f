// The values a vault already holds, found again verbatim in any text: indexed by their first
// characters, so a scan costs one map lookup per position however many values are known.

import type { PiiMatch } from "./types.js";

/** Characters of the index key; shorter values are left to the detectors (too short to find safely). */
const KEY_CHARS = 3;

interface Known {
  type: string;
  value: string;
}

export class KnownValues {
  /** Values by their first KEY_CHARS characters, longest first, so the longest occurrence wins. */
  private readonly byPrefix = new Map<string, Known[]>();
  private readonly values = new Set<string>();

  get size(): number {
    return this.values.size;
  }

  has(value: string): boolean {
    return this.values.has(value);
  }

  add(type: string, value: string): void {
    if (value.length < KEY_CHARS || this.values.has(value)) return;
    this.values.add(value);
    const key = value.slice(0, KEY_CHARS);
    const list = this.byPrefix.get(key);
    if (!list) {
      this.byPrefix.set(key, [{ type, value }]);
      return;
    }
    const at = list.findIndex((k) => k.value.length < value.length);
    list.splice(at < 0 ? list.length : at, 0, { type, value });
  }

  /** Every occurrence of a known value in `text`, left to right, longest first, never overlapping. */
  find(text: string): PiiMatch[] {
    const out: PiiMatch[] = [];
    if (this.values.size === 0) return out;
    const last = text.length - KEY_CHARS;
    for (let i = 0; i <= last; i++) {
      const list = this.byPrefix.get(text.slice(i, i + KEY_CHARS));
      if (!list) continue;
      const hit = list.find((k) => text.startsWith(k.value, i));
      if (!hit) continue;
      out.push({ type: hit.type, start: i, end: i + hit.value.length, value: hit.value });
      i += hit.value.length - 1;
    }
    return out;
  }
}
