// The config file (sandgate.json): read, parse and merge over the defaults, with errors that
// name the file and the key. loadConfig (env.ts) applies the environment on top.

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { SandgateError } from "../errors/index.js";
import type { SandgateConfig } from "./schema.js";
import { validateConfig } from "./validate.js";

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Objects merge key by key; anything else (arrays included) in `over` replaces `base`. */
function merge(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over;
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = key in base ? merge(base[key], value) : value;
  return out;
}

/** Reads `path` (from `cwd` when relative) and returns `defaults` with the file's settings merged in, validated. */
export function readConfigFile(path: string, defaults: SandgateConfig, cwd?: string): SandgateConfig {
  let text: string;
  try {
    text = readFileSync(cwd === undefined ? path : resolve(cwd, path), "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message;
    throw new SandgateError("CONFIG_INVALID", `cannot read config file ${path}: ${reason}`, { data: { source: path }, cause: error });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new SandgateError("CONFIG_INVALID", `config file ${path} is not valid JSON: ${(error as Error).message}`, {
      data: { source: path },
      cause: error,
    });
  }
  if (!isObject(parsed)) {
    throw new SandgateError("CONFIG_INVALID", `config file ${path} must hold a JSON object`, { data: { source: path } });
  }
  // "$schema" lets editors validate the file; it is not a setting.
  const { $schema: _schema, ...settings } = parsed;
  return validateConfig(merge(defaults, settings), path);
}
