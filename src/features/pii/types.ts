// The vocabulary of PII tokenization: the kinds of personal data sandgate finds, a match in a text,
// and an entity as the wire reports it. The detectors, the vault and the boundary speak these.

// The kinds are the core's words (the settings name them); the feature speaks them from there.
export { DEFAULT_PII_TYPES, PII_TYPES } from "../../config/pii-terms.js";
export type { PiiType } from "../../config/pii-terms.js";

/** An admin's own kind of data: a name (its tokens are `[NAME_n]` in capitals) and a JavaScript regular expression. */
export interface CustomPattern {
  name: string;
  regex: string;
  /** Regular-expression flags besides `g` (always set), e.g. "i". */
  flags?: string;
}

/** A value found in a text: `start`/`end` are JavaScript string indices (UTF-16 units), end exclusive. */
export interface PiiMatch {
  /** A built-in PiiType or a custom pattern's name. */
  type: string;
  start: number;
  end: number;
  value: string;
}

/**
 * An entity as `POST /pii/tokenize` and `sandgate pii --json` report it: the token that replaced it
 * and where the value was in the input, in Unicode code points (Python's string indices), end exclusive.
 */
export interface PiiEntity {
  type: string;
  token: string;
  start: number;
  end: number;
}

/** Which kinds one scan looks for. */
export interface DetectOptions {
  types: readonly string[];
  /** Compiled custom patterns (see compilePatterns); their names may appear in `types`. */
  patterns?: readonly CompiledPattern[];
}

export interface CompiledPattern {
  name: string;
  /** The backtracking engine's, until a scan finds it slow; then `linear` for good. */
  regex: RegExp;
  /** The same pattern for V8's linear-time engine, where that engine can run it. */
  linear?: RegExp;
}
