// execute.languages (GET /languages): the languages sandgate runs, each with its names, its
// interpreter and version, its file extensions and the packages it can import.

import { execFileSync } from "node:child_process";
import { z } from "zod";
import type { SandgateConfig } from "../../config/index.js";
import type { Engine } from "../../execution/index.js";
import { LANGUAGE_SPECS, LANGUAGES, RUNNER_SPECS, systemPythonModules, type Language } from "../../languages/index.js";
import { defineOperation } from "../../operations/index.js";
import { installedPackageNames } from "../../sandbox/index.js";

export interface LanguagesHost {
  engine: Engine;
  config: SandgateConfig;
}

const languagesOutput = z.object({
  languages: z.array(
    z.object({
      name: z.string(),
      aliases: z.array(z.string()),
      runner: z.string(),
      version: z.string().nullable(),
      file_extensions: z.array(z.string()),
      packages: z.array(z.string()).describe("The admin's packages this language can import (sandgate packages sync), besides the system's"),
      system_modules: z
        .array(z.string())
        .optional()
        .describe("Python: the modules of note the host's Python has under /usr (Debian's python3-*, e.g. numpy, pandas, matplotlib); `sandgate doctor` imports them for real"),
    }),
  ),
});
type LanguageEntry = z.infer<typeof languagesOutput>["languages"][number];

function interpreterVersion(path: string): string | null {
  try {
    return execFileSync(path, ["--version"], { encoding: "utf8", timeout: 5000, stdio: ["ignore", "pipe", "pipe"] }).trim().split("\n")[0] ?? null;
  } catch {
    return null;
  }
}

/** Each engine's languages as its interpreters report them, asked once (an interpreter does not change while the server runs). */
const interpretersOf = new WeakMap<Engine, LanguageEntry[]>();

function interpreters(engine: Engine): LanguageEntry[] {
  let entries = interpretersOf.get(engine);
  if (!entries) {
    entries = LANGUAGES.map((name) => {
      const spec = LANGUAGE_SPECS[name];
      const runner = engine.runtime.interpreters[RUNNER_SPECS[spec.runner].interpreter];
      const systemModules = RUNNER_SPECS[spec.runner].interpreter === "python" ? { system_modules: systemPythonModules(runner) } : {};
      return { name, aliases: [...spec.aliases], runner, version: interpreterVersion(runner), file_extensions: [...spec.extensions], packages: [], ...systemModules };
    });
    interpretersOf.set(engine, entries);
  }
  return entries;
}

export const listLanguages = defineOperation({
  id: "execute.languages",
  summary: "Languages sandgate runs, with their interpreters",
  scope: "any",
  effects: ["read"],
  idempotent: true,
  input: z.object({}),
  output: languagesOutput,
  run: async (host: LanguagesHost) => {
    // Read at each request: a `sandgate packages sync` takes effect without a restart.
    const installed = installedPackageNames(host.config.sandboxDir);
    const packagesOf = (name: Language): string[] => {
      const interpreter = RUNNER_SPECS[LANGUAGE_SPECS[name].runner].interpreter;
      return interpreter === "python" ? installed.python : interpreter === "node" ? installed.node : [];
    };
    return { languages: interpreters(host.engine).map((entry) => ({ ...entry, packages: packagesOf(entry.name as Language) })) };
  },
  surfaces: { mcp: null, rest: { method: "get", path: "/languages", tag: "execution", description: null }, sandbox: null },
});
