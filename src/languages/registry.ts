// The registry: every language spec and runner spec keyed by its name, and the lookups the edges
// use (a name or alias from a request, a file's extension from the CLI).

import { extname } from "node:path";
import { BASH, BASH_RUNNER } from "./bash.js";
import { JAVASCRIPT, JAVASCRIPT_RUNNER } from "./javascript.js";
import { LANGUAGES, type Language, type RunnerKind } from "./names.js";
import { prepareOnHost, type PrepareOutcome } from "./prepare-code.js";
import { PYTHON, PYTHON_RUNNER } from "./python.js";
import type { LanguageSpec, RunnerSpec, UpstreamCallExample } from "./spec.js";
import { TYPESCRIPT } from "./typescript.js";

export const LANGUAGE_SPECS: Record<Language, LanguageSpec> = { python: PYTHON, javascript: JAVASCRIPT, typescript: TYPESCRIPT, bash: BASH };

export const RUNNER_SPECS: Record<RunnerKind, RunnerSpec> = { python: PYTHON_RUNNER, javascript: JAVASCRIPT_RUNNER, bash: BASH_RUNNER };

const BY_NAME = new Map<string, Language>();
for (const language of LANGUAGES) {
  for (const name of [language, ...LANGUAGE_SPECS[language].aliases]) {
    if (BY_NAME.has(name)) throw new Error(`language name ${name} is declared twice`);
    BY_NAME.set(name, language);
  }
}

/** Every name a request may give a language by, in lower case: the names first, then the aliases. */
export const LANGUAGE_NAMES_AND_ALIASES = [...BY_NAME.keys()] as [string, ...string[]];

/** The language a name or alias stands for, matched case-insensitively; undefined when none does. */
export function resolveLanguage(nameOrAlias: string): Language | undefined {
  return BY_NAME.get(nameOrAlias.toLowerCase());
}

/** The language a file is written in, by its extension (case-insensitive); undefined when unknown. */
export function languageForFile(path: string): Language | undefined {
  const extension = extname(path).toLowerCase();
  if (extension === "") return undefined;
  return LANGUAGES.find((language) => LANGUAGE_SPECS[language].extensions.includes(extension));
}

/** Languages with their aliases, for messages: `python (py, python3), javascript (js, node, nodejs), ...`. */
export function describeLanguages(): string {
  return LANGUAGES.map((language) => {
    const { aliases } = LANGUAGE_SPECS[language];
    return aliases.length > 0 ? `${language} (${aliases.join(", ")})` : language;
  }).join(", ");
}

/** The titles of the languages `pick` keeps, for prose: "Python, JavaScript, TypeScript or Bash". */
export function languageTitles(conjunction: "and" | "or", pick: (spec: LanguageSpec) => boolean = () => true): string {
  const titles = LANGUAGES.map((language) => LANGUAGE_SPECS[language]).filter(pick).map((spec) => spec.title);
  return titles.length > 1 ? `${titles.slice(0, -1).join(", ")} ${conjunction} ${titles.at(-1)}` : (titles[0] ?? "");
}

/**
 * Each distinct way of calling an upstream tool with the titles of the languages that share it
 * ("JavaScript/TypeScript"), the most shared first, for tool descriptions and the usage prompt.
 */
export function upstreamCallExamples(): Array<{ titles: string; example: UpstreamCallExample }> {
  const groups = new Map<string, { titles: string[]; example: UpstreamCallExample }>();
  for (const language of LANGUAGES) {
    const { title, upstreamCall } = LANGUAGE_SPECS[language];
    const group = groups.get(upstreamCall.call);
    if (group) group.titles.push(title);
    else groups.set(upstreamCall.call, { titles: [title], example: upstreamCall });
  }
  return [...groups.values()].sort((a, b) => b.titles.length - a.titles.length).map((g) => ({ titles: g.titles.join("/"), example: g.example }));
}

/** The code a runner executes for a request in `language` (run by its spec's runner), or the syntax error found on the host. */
export function prepareCode(language: Language, code: string): PrepareOutcome {
  const { runner, filename, prepare } = LANGUAGE_SPECS[language];
  return prepareOnHost(runner, filename, code, prepare ?? ((source) => ({ code: source })));
}

/**
 * Prepares each language's probe code once, ahead of the first call: the host-side parsers (acorn,
 * sucrase) compile lazily, and their first use cost that language's first call 10-25 ms.
 */
export function warmCodePreparation(): void {
  for (const language of LANGUAGES) prepareCode(language, LANGUAGE_SPECS[language].doctorProbe.code);
}
