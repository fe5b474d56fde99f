// What one admin-side scan looks for: the kinds asked for (or the configured ones) checked against the
// built-in kinds and the custom patterns of config. `sandgate pii` and `POST /pii/tokenize` share it.

import { SandgateError } from "../../errors/index.js";
import { compilePatterns } from "./custom.js";
import { PII_TYPES, type CustomPattern, type DetectOptions } from "./types.js";

export interface ScanConfig {
  types: readonly string[];
  patterns: readonly CustomPattern[];
}

/** The detect options for `types` (default: the configured ones); an unknown kind is bad input naming the known ones. */
export function scanOptions(config: ScanConfig, types?: readonly string[]): DetectOptions {
  const patterns = compilePatterns(config.patterns);
  const wanted = types ?? config.types;
  const known = [...PII_TYPES, ...patterns.map((p) => p.name)];
  const unknown = wanted.filter((t) => !known.includes(t));
  if (unknown.length > 0) {
    throw new SandgateError("INVALID_INPUT", `unknown PII kind ${unknown.map((t) => JSON.stringify(t)).join(", ")}; use ${known.join(", ")}`, { data: { unknown, known } });
  }
  return { types: [...new Set(wanted)], patterns };
}
