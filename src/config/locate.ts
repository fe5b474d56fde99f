// Which config file applies: the one named explicitly (`--config FILE`), else $SANDGATE_CONFIG,
// else ./sandgate.json when it exists. The CLI and the library both ask this one function.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { CONFIG_FILE_VARIABLE, envText } from "./settings.js";

/** The file name looked for in the working directory. */
export const CONFIG_FILE_NAME = "sandgate.json";

export interface ConfigLocation {
  /** A config file named explicitly (the CLI's `--config FILE`); wins over everything else. */
  configPath?: string;
  /** The environment to read SANDGATE_CONFIG from; `process.env` unless given. */
  env?: Record<string, string | undefined>;
  /** Where to look for sandgate.json; the process's working directory unless given. */
  cwd?: string;
}

/** The config file that applies, or undefined when there is none (defaults and environment only). */
export function locateConfigFile(location: ConfigLocation = {}): string | undefined {
  if (location.configPath !== undefined) return location.configPath;
  const fromEnv = envText(location.env ?? process.env, CONFIG_FILE_VARIABLE.env);
  if (fromEnv) return fromEnv;
  // Relative when no cwd is given, so messages name the file as the user typed it.
  const candidate = location.cwd === undefined ? CONFIG_FILE_NAME : join(location.cwd, CONFIG_FILE_NAME);
  return existsSync(candidate) ? candidate : undefined;
}
