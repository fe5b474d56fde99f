// Code nested deeper than a host-side parser's stack (sucrase, acorn) can follow: recognising the
// overflow, and where in the user's code the nesting got that deep, for a syntax error result.

/** Bracket depth reported as the point where code became too deeply nested. */
const REPORTED_DEPTH = 1000;

export class NestingTooDeepError extends Error {
  override readonly name = "NestingTooDeepError";

  constructor(
    /** 1-based line in the user's code. */
    readonly line: number,
    /** 1-based column in the user's code. */
    readonly column: number,
  ) {
    super(`the code is nested too deeply to parse (more than ${REPORTED_DEPTH} levels of brackets); split it into smaller expressions`);
  }
}

/** A parser ran out of stack (V8's RangeError), as opposed to finding a real syntax error. */
export function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

/**
 * Where the bracket depth first passes REPORTED_DEPTH, counting ( [ { and their closers and
 * ignoring nothing: good enough to point at the culprit; 1:1 when the scan finds no such place.
 */
export function nestingError(code: string): NestingTooDeepError {
  let depth = 0;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (c === 10) {
      line++;
      lineStart = i + 1;
    } else if (c === 40 || c === 91 || c === 123) {
      if (++depth > REPORTED_DEPTH) return new NestingTooDeepError(line, i - lineStart + 1);
    } else if (c === 41 || c === 93 || c === 125) {
      depth = Math.max(0, depth - 1);
    }
  }
  return new NestingTooDeepError(1, 1);
}
