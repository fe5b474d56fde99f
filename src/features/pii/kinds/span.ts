// What every built-in detector returns, and the small text checks they share: the words just before
// a candidate (context) and the boundaries that keep a candidate from being part of a longer token.

/** A value found by one detector: JavaScript string indices, end exclusive. */
export interface Span {
  start: number;
  end: number;
}

/** A detector: every value of its kind in `text`, in any order (overlaps are settled by detect.ts). */
export type Detector = (text: string) => Span[];

/** The lower-cased `width` characters before `start` (the context words a bare number needs). */
export function before(text: string, start: number, width: number): string {
  return text.slice(Math.max(0, start - width), start).toLowerCase();
}

/** Digits only. */
export function digitsOf(value: string): string {
  return value.replace(/\D+/g, "");
}

/** Every match of a global regex, lazily (no array of all matches of a large text). */
export function* scan(regex: RegExp, text: string): Generator<RegExpExecArray> {
  regex.lastIndex = 0;
  for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
    if (m[0].length === 0) regex.lastIndex++;
    yield m;
  }
}
