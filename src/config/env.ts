// Loading the effective configuration: defaults, then the config file, then the environment.
// Which variables exist and how each is parsed is declared once, in schema.ts; see settings.ts.

import { isSandgateError, SandgateError } from "../errors/index.js";
import { readConfigFile } from "./file.js";
import { locateConfigFile } from "./locate.js";
import type { SandgateConfig } from "./schema.js";
import { applyEnv, defaultConfig, variableFor } from "./settings.js";
import { validateConfig } from "./validate.js";

type Env = Record<string, string | undefined>;

export interface LoadConfigOptions {
  /** A sandgate.json to read; else SANDGATE_CONFIG names one, else ./sandgate.json when it exists. */
  configPath?: string;
  /**
   * The directory whose sandgate.json applies when no file is named, and that a relative file name is
   * read from (messages keep the name as given); the working directory by default.
   */
  cwd?: string;
}

/**
 * The effective configuration: defaults, then the config file, then the environment.
 * Errors name the offending key and where it came from.
 */
export function loadConfig(env: Env = process.env, options: LoadConfigOptions = {}): SandgateConfig {
  const path = locateConfigFile({ ...options, env });
  const base = path === undefined ? defaultConfig() : readConfigFile(path, defaultConfig(), options.cwd);
  const source = path === undefined ? "environment" : `environment over ${path}`;
  try {
    return validateConfig(applyEnv(base, env), source);
  } catch (error) {
    throw namingVariable(error, env);
  }
}

/** A value out of range that came from a variable: the message names the variable as well as the key. */
function namingVariable(error: unknown, env: Env): unknown {
  if (!isSandgateError(error) || error.code !== "CONFIG_INVALID" || typeof error.data.key !== "string") return error;
  const variable = variableFor(error.data.key, env);
  if (variable === undefined) return error;
  return new SandgateError("CONFIG_INVALID", `${error.message} (environment variable ${variable})`, { data: { ...error.data, variable }, cause: error });
}
