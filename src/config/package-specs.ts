// What an admin may write in python.packages and node.packages: a strict subset of pip's
// requirement and npm's package spec grammar (names, extras, version ranges; no URLs, paths or options).

import { z } from "zod";
import { SandgateError } from "../errors/index.js";
import type { EnvCodec } from "./env-codecs.js";

const PY_NAME = "[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?";
const PY_CLAUSE = "(?:===|==|!=|<=|>=|~=|<|>)[A-Za-z0-9][A-Za-z0-9.*+!_-]*";
/** `name`, `name[extra,extra]`, `name>=1.2,<2`: what `pip install` takes as one requirement, minus markers and URLs. */
export const PYTHON_REQUIREMENT = new RegExp(`^(${PY_NAME})(?:\\[${PY_NAME}(?:,${PY_NAME})*\\])?(?:${PY_CLAUSE}(?:,${PY_CLAUSE})*)?$`);

const NPM_NAME = "(?:@[a-z0-9~][a-z0-9._~-]*/)?[a-z0-9~][a-z0-9._~-]*";
/** `name`, `@scope/name`, `name@3`, `name@^1.2.0`, `name@latest`: registry packages only (no git, file or URL specs). */
export const NODE_SPEC = new RegExp(`^(${NPM_NAME})(?:@([A-Za-z0-9^~<>=*.+_|-]+))?$`);

/** The distribution name of a valid requirement, normalised as pip compares them (PEP 503). */
export function pythonPackageName(requirement: string): string {
  const name = PYTHON_REQUIREMENT.exec(requirement)?.[1] ?? requirement;
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

/** The package name of a valid npm spec (`@scope/name` keeps its scope). */
export function nodePackageName(spec: string): string {
  return NODE_SPEC.exec(spec)?.[1] ?? spec;
}

function packageList(what: string, pattern: RegExp, nameOf: (spec: string) => string, example: string): z.ZodType<string[]> {
  return z
    .array(z.string().max(214).regex(pattern, `each entry is ${what} (e.g. ${example}); no URLs, paths, spaces or options`))
    .max(200)
    .refine((list) => new Set(list.map(nameOf)).size === list.length, "each package may be listed once");
}

export const pythonPackagesSchema = packageList("a pip requirement: a name with optional [extras] and version clauses", PYTHON_REQUIREMENT, pythonPackageName, '"pandas" or "numpy>=1.24,<3"');
export const nodePackagesSchema = packageList("an npm registry package: a name with an optional @version or @range", NODE_SPEC, nodePackageName, '"lodash" or "date-fns@3"');

/**
 * A comma-separated list in which a comma followed by a version operator continues the entry
 * before it, so "numpy>=1.24,<3,pandas" is two requirements.
 */
function specListCodec(example: string): EnvCodec<string[]> {
  return {
    kind: "custom",
    format: "comma-separated",
    parse(raw, _current, variable) {
      const entries: string[] = [];
      for (const part of raw.split(",").map((s) => s.trim())) {
        if (part === "") continue;
        if (/^[<>=!~]/.test(part)) {
          if (entries.length === 0) throw new SandgateError("CONFIG_INVALID", `${variable} starts with a version clause ${JSON.stringify(part)} that belongs to no package`, { data: { variable } });
          entries[entries.length - 1] += `,${part}`;
        } else entries.push(part);
      }
      return entries;
    },
    show: (value) => value.join(","),
    example: (current) => (current?.join(",") === example ? `${example}-other` : example),
  };
}

export const pythonPackagesCodec = specListCodec("example-package");
export const nodePackagesCodec = specListCodec("example-package");
