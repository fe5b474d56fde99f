// The language registry: one spec per language and per runner, and the names that key every table.

export { INTERPRETER_SPECS, INTERPRETERS, LANGUAGES, RUNNER_KINDS } from "./names.js";
export type { ChannelKind, Interpreter, InterpreterSpec, Language, RunnerKind } from "./names.js";
export {
  describeLanguages,
  LANGUAGE_NAMES_AND_ALIASES,
  LANGUAGE_SPECS,
  languageForFile,
  languageTitles,
  prepareCode,
  resolveLanguage,
  RUNNER_SPECS,
  upstreamCallExamples,
  warmCodePreparation,
} from "./registry.js";
export type { LanguageSpec, RunnerLaunch, RunnerSpec, UpstreamCallExample } from "./spec.js";
export type { PreparedCode, PrepareOutcome } from "./prepare-code.js";
export { PYTHON_MODULES_OF_NOTE, systemPythonModules } from "./python-modules.js";
