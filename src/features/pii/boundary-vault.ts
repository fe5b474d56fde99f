// A vault at the boundary between sandboxed code and the agent: it learns the values found in
// upstream tool results, tokenizes what leaves for the agent and detokenizes what goes to tools.

import { detectPii } from "./detect.js";
import { KnownValues } from "./known-values.js";
import { variantsOf } from "./variants.js";
import type { DetectOptions, PiiMatch } from "./types.js";
import { PiiVault, tokenLabel } from "./vault.js";

/** A token's shape, as vault.ts issues them. */
const TOKEN = /\[[A-Z][A-Z0-9_]{0,39}_[1-9][0-9]{0,8}\]/g;

/** Tokens written literally in `text`: a new token skips them, so a tool result cannot name one in advance. */
function literalTokens(text: string): ReadonlySet<string> | undefined {
  return text.includes("[") ? new Set(text.match(TOKEN)) : undefined;
}

/** Distinct values one vault holds at most: a flood of tool data cannot grow host memory without bound. */
export const MAX_VAULT_VALUES = 100_000;
/** Levels of a value looked into (a result deeper than 256 levels is not shown anyway); deeper ones are not shown, not recursed into. */
const MAX_VALUE_DEPTH = 300;
/** Characters a value may have and count once against the caps; a longer one (a custom kind may match a whole line) counts once per this many. */
const CHARS_PER_VALUE = 64;

function unitsOf(value: string): number {
  return Math.ceil(value.length / CHARS_PER_VALUE);
}

/**
 * Values all the vaults sharing it may still take (a full vault is about 40 MB): many sessions or
 * callers, each filling a vault, cannot together exhaust host memory. Past it new values are redacted.
 */
export class VaultBudget {
  constructor(public left: number) {}
}

export type PiiCounts = Record<string, number>;

export class BoundaryVault {
  private readonly vault = new PiiVault();
  private readonly known = new KnownValues();
  /** What the values held count against the caps (see CHARS_PER_VALUE). */
  private charged = 0;
  /**
   * Tokens that tool results wrote as text (a note stored before the session issued that token, a
   * hostile server): the code may pass that text on, so it never goes back to a value; at most as
   * many as the vault's cap of values.
   */
  private readonly written = new Set<string>();
  /** Kinds that were looked for in tool results so far (file reads run their detectors). */
  readonly kinds = new Set<string>();

  /** The budgets this vault's values count against (the server's, its caller's). */
  private budgets: readonly VaultBudget[];

  constructor(
    private readonly maxValues = MAX_VAULT_VALUES,
    budget?: VaultBudget | readonly VaultBudget[],
  ) {
    this.budgets = budget === undefined ? [] : budget instanceof VaultBudget ? [budget] : budget;
  }

  /** Gives this vault's values back to its budgets, once: the vault is dropped (a call still under way may use it, uncharged). */
  release(): void {
    for (const budget of this.budgets) budget.left += this.charged;
    this.budgets = [];
  }

  /** Distinct values held. */
  get size(): number {
    return this.vault.size;
  }

  /** Whether this vault issued `token` (`[EMAIL_1]`), so a tool call's arguments get its value back. */
  issued(token: string): boolean {
    return this.vault.valueOf(token) !== undefined;
  }

  /** Finds the kinds of `options` in every string of `value` (keys too) and remembers the values; counts per kind. */
  learn(value: unknown, options: DetectOptions): PiiCounts {
    const counts: PiiCounts = {};
    for (const type of options.types) this.kinds.add(type);
    // Breadth first, in order: tokens are numbered as the values appear.
    const queue: unknown[] = [value];
    for (let at = 0; at < queue.length; at++) {
      const node = queue[at];
      if (typeof node === "string") {
        for (const token of literalTokens(node) ?? []) this.noteWritten(token);
        const matches = detectPii(node, options);
        const taken = matches.length > 0 ? this.takenIn(node) : undefined;
        for (const match of matches) {
          const fresh = !this.known.has(match.value);
          if (this.tokenOf(match, taken) === undefined) continue;
          counts[match.type] = (counts[match.type] ?? 0) + 1;
          // Code may print it without separators or in another case: found again as well. A value met
          // again has them already (parsing a phone costs more than finding it).
          if (fresh) for (const variant of variantsOf(match.type, match.value)) this.known.add(match.type, variant);
        }
      } else if (Array.isArray(node)) {
        for (const item of node) queue.push(item);
      } else if (node !== null && typeof node === "object") {
        for (const [key, item] of Object.entries(node)) queue.push(key, item);
      }
    }
    return counts;
  }

  /**
   * `text` with every value this vault holds replaced by its token (exact occurrences, longest
   * first), and, with `options`, every value those detectors find too (reformatted ones); `counts`
   * receives the replacements per kind.
   */
  tokenizeText(text: string, options?: DetectOptions, counts?: PiiCounts): string {
    const matches = this.matches(text, options);
    if (matches.length === 0) return text;
    const taken = this.takenIn(text);
    let out = "";
    let at = 0;
    for (const match of matches) {
      out += text.slice(at, match.start) + (this.tokenOf(match, taken) ?? `[${tokenLabel(match.type)}_REDACTED]`);
      at = match.end;
      if (counts) counts[match.type] = (counts[match.type] ?? 0) + 1;
    }
    return out + text.slice(at);
  }

  /**
   * The last position at or before `at` that no value of `text` (as tokenizeText finds them) spans:
   * text cut there and tokenized in two pieces loses no value to the cut.
   */
  cutBefore(text: string, at: number, options?: DetectOptions): number {
    let cut = at;
    for (const match of this.matches(text, options)) {
      if (match.start >= cut) break;
      if (match.end > cut) cut = match.start;
    }
    return cut;
  }

  /** Known values and, with `options`, detected ones in `text`: sorted, never overlapping. */
  private matches(text: string, options?: DetectOptions): PiiMatch[] {
    const known = this.known.find(text);
    const found = options && options.types.length > 0 ? detectPii(text, options) : [];
    return found.length === 0 ? known : known.length === 0 ? found : merge(known, found);
  }

  /** Every string in `value` (keys too) tokenized as tokenizeText does; what nests deeper than MAX_VALUE_DEPTH is not shown. */
  tokenizeValue(value: unknown, options?: DetectOptions, counts?: PiiCounts, depth = 0): unknown {
    if (typeof value === "string") return this.tokenizeText(value, options, counts);
    // A card or phone number the code parsed into a number: its digits are a value too, and its token a string.
    if (typeof value === "number" && Number.isInteger(value) && Math.abs(value) >= 1_000_000) {
      const digits = String(value);
      const tokenized = this.tokenizeText(digits, options, counts);
      return tokenized === digits ? value : tokenized;
    }
    if (typeof value !== "object" || value === null) return value;
    if (depth >= MAX_VALUE_DEPTH) return "[a value nested too deeply to check for personal data, not shown]";
    if (Array.isArray(value)) return value.map((item) => this.tokenizeValue(item, options, counts, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[this.tokenizeText(key, options, counts)] = this.tokenizeValue(item, options, counts, depth + 1);
    return out;
  }

  /** `value` with every token this vault issued, anywhere in its strings, swapped back for the real value. */
  detokenize<T>(value: T): T {
    return this.vault.detokenize(value);
  }

  private noteWritten(token: string): void {
    if (this.written.size < this.maxValues) this.written.add(token);
    this.vault.withdraw(token);
  }

  /** Tokens a new one must not be: those written in `text` and those tool results wrote. */
  private takenIn(text: string): Pick<ReadonlySet<string>, "has"> {
    const local = literalTokens(text);
    return { has: (token) => this.written.has(token) || local?.has(token) === true };
  }

  /** The value's token, issued now if new; undefined when the vault is full and the value new. */
  private tokenOf(match: PiiMatch, taken?: Pick<ReadonlySet<string>, "has">): string | undefined {
    const units = unitsOf(match.value);
    if (!this.known.has(match.value) && (this.charged + units > this.maxValues || this.budgets.some((budget) => budget.left < units))) return undefined;
    const before = this.vault.size;
    this.known.add(match.type, match.value);
    const token = this.vault.tokenFor(match.type, match.value, taken);
    if (this.vault.size > before) {
      this.charged += units;
      for (const budget of this.budgets) budget.left -= units;
    }
    return token;
  }
}

/** Two sorted match lists as one: by start, the longer first, overlaps dropped. */
function merge(a: readonly PiiMatch[], b: readonly PiiMatch[]): PiiMatch[] {
  const all = [...a, ...b].sort((x, y) => x.start - y.start || y.end - x.end);
  const out: PiiMatch[] = [];
  let end = 0;
  for (const match of all) {
    if (match.start < end) continue;
    out.push(match);
    end = match.end;
  }
  return out;
}
