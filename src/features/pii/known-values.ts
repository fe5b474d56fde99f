// The values a vault already holds, found again verbatim in any text: indexed by their first three
// characters and lengths, each candidate checked by a rolling hash, so a scan is linear in the text.

import { ownString } from "./own-string.js";
import type { PiiMatch } from "./types.js";

/** Characters of the index key; shorter values are left to the detectors (too short to find safely). */
const KEY_CHARS = 3;
/**
 * Distinct lengths indexed per key: each is one hash check at every position where the key occurs.
 * A value of a further length is not indexed (the detectors of its kind still find it), so text built
 * to match a key everywhere costs at most this many checks per character.
 */
export const MAX_LENGTHS_PER_KEY = 16;
/** The rolling hash: a prime below 2^26, so a product of two residues stays exact in a double. */
const MOD = 67_108_859;
const BASE = 131;

/** The first three UTF-16 units at `i` as one number (exact: below 2^53), so no string is made per position. */
function keyAt(text: string, i: number): number {
  return text.charCodeAt(i) * 4294967296 + text.charCodeAt(i + 1) * 65536 + text.charCodeAt(i + 2);
}

function isDigit(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 48 && c <= 57;
}

function hashOf(value: string): number {
  let h = 0;
  for (let i = 0; i < value.length; i++) h = (h * BASE + value.charCodeAt(i)) % MOD;
  return h;
}

interface Bucket {
  length: number;
  hashes: Set<number>;
}

export class KnownValues {
  /** Each value's kind. */
  private readonly types = new Map<string, string>();
  /** Per key, the distinct lengths of the indexed values starting with it (longest first) and their hashes. */
  private readonly buckets = new Map<number, Bucket[]>();
  /** BASE^k mod MOD, for k up to the longest indexed value. */
  private readonly powers: number[] = [1];

  get size(): number {
    return this.types.size;
  }

  has(value: string): boolean {
    return this.types.has(value);
  }

  add(type: string, found: string): void {
    if (found.length < KEY_CHARS || this.types.has(found)) return;
    const value = ownString(found);
    this.types.set(value, type);
    const key = keyAt(value, 0);
    let list = this.buckets.get(key);
    if (!list) this.buckets.set(key, (list = []));
    let bucket = list.find((b) => b.length === value.length);
    if (!bucket) {
      if (list.length >= MAX_LENGTHS_PER_KEY) return;
      bucket = { length: value.length, hashes: new Set() };
      const at = list.findIndex((b) => b.length < value.length);
      list.splice(at < 0 ? list.length : at, 0, bucket);
    }
    bucket.hashes.add(hashOf(value));
    while (this.powers.length <= value.length) this.powers.push(((this.powers[this.powers.length - 1] ?? 1) * BASE) % MOD);
  }

  /** Every occurrence of an indexed value in `text`, left to right, longest first, never overlapping. */
  find(text: string): PiiMatch[] {
    const out: PiiMatch[] = [];
    if (this.types.size === 0) return out;
    const n = text.length;
    // Prefix hashes, made at the first position whose key is known (most texts have none).
    let prefix: Uint32Array | undefined;
    for (let i = 0; i <= n - KEY_CHARS; i++) {
      const list = this.buckets.get(keyAt(text, i));
      if (!list) continue;
      if (!prefix) {
        prefix = new Uint32Array(n + 1);
        for (let j = 0; j < n; j++) prefix[j + 1] = ((prefix[j] ?? 0) * BASE + text.charCodeAt(j)) % MOD;
      }
      const from = prefix[i] ?? 0;
      for (const { length, hashes } of list) {
        if (i + length > n) continue;
        let hash = (prefix[i + length] ?? 0) - ((from * (this.powers[length] ?? 0)) % MOD);
        if (hash < 0) hash += MOD;
        if (!hashes.has(hash)) continue;
        const value = text.slice(i, i + length);
        const type = this.types.get(value);
        if (type === undefined) continue;
        // Digits are a value's own only where the digits around it end: 0100 is no phone inside 301005.
        if ((isDigit(value, 0) && isDigit(text, i - 1)) || (isDigit(value, length - 1) && isDigit(text, i + length))) continue;
        out.push({ type, start: i, end: i + length, value });
        i += length - 1;
        break;
      }
    }
    return out;
  }
}
