// The one bound on constant folding: every string an analysis builds out of the program's constants
// (concatenation, templates, join, replace, reversal, decoding pipelines) is built or charged here.

/**
 * Why: hostile code of 300 bytes can double a string 25 times (V8 ropes make that cheap) and then have
 * it spread into an array (a reversal), and V8 aborts the whole process on that: an out-of-memory abort
 * cannot be caught. So sizes are checked before a string is built, never after.
 */
export class FoldLimitExceeded extends Error {}

/**
 * A folded string may be this long, or as long as the program if that is longer: putting the program's
 * own pieces back together always fits, only duplication (a + a, replace, repeat) grows past it.
 */
const MIN_STRING = 64 * 1024;
/** All folds of one analysis together may build this many longest strings (a few ms of copying). */
const WORK_FACTOR = 32;

interface Budget {
  maxString: number;
  workLeft: number;
}

/** Outside an analysis (rules used directly): the string bound only. */
const UNMETERED: Budget = { maxString: MIN_STRING, workLeft: Infinity };

/** The budget of the analysis running now: analyses are synchronous, one at a time per thread. */
let active: Budget = UNMETERED;

/** Runs one analysis of `code` under a fresh budget; a fold past it throws FoldLimitExceeded out of `run`. */
export function withFoldBudget<T>(code: string, run: () => T): T {
  const outer = active;
  const maxString = Math.max(MIN_STRING, code.length);
  active = { maxString, workLeft: maxString * WORK_FACTOR };
  try {
    return run();
  } finally {
    active = outer;
  }
}

/** Accounts for `length` characters about to be built (or parsed again); throws before a bound is passed. */
export function charge(length: number): void {
  if (length > active.maxString) throw new FoldLimitExceeded(`it builds a string longer than ${active.maxString} characters out of constants`);
  active.workLeft -= length;
  if (active.workLeft < 0) throw new FoldLimitExceeded(`its constant strings add up to more than ${active.maxString * WORK_FACTOR} characters`);
}

/** `a + b + ...`, charged for the whole result. */
export function concat(parts: readonly string[]): string {
  let length = 0;
  for (const part of parts) length += part.length;
  charge(length);
  return parts.join("");
}

/**
 * `acc + piece` for strings built piece by piece (f-strings, templates, shell words): charged for the
 * new piece only (V8 keeps the sum as a rope), with the whole checked against the string bound.
 */
export function append(acc: string, piece: string): string {
  if (acc.length + piece.length > active.maxString) charge(acc.length + piece.length);
  charge(piece.length);
  return acc + piece;
}

export function join(parts: readonly string[], separator: string): string {
  let length = Math.max(0, parts.length - 1) * separator.length;
  for (const part of parts) length += part.length;
  charge(length);
  return parts.join(separator);
}

/** Every `from` in `text` replaced by `to` (an empty `from` goes between characters, as split("") does). */
export function replaceAll(text: string, from: string, to: string): string {
  let count = 0;
  if (from === "") count = Math.max(0, text.length - 1);
  else for (let at = text.indexOf(from); at >= 0; at = text.indexOf(from, at + from.length)) count++;
  charge(text.length + count * (to.length - from.length));
  return text.split(from).join(to);
}

/** The characters of `text` (code points) in reverse order. */
export function reverse(text: string): string {
  charge(text.length);
  return Array.from(text).reverse().join("");
}

/** A string computed by a length-keeping method (case, trim, decoding), charged once it exists. */
export function charged(text: string): string {
  charge(text.length);
  return text;
}
