// The language registry: one spec per language and per runner, and the names that key every table.

export { INTERPRETER_SPECS, INTERPRETERS, LANGUAGES, RUNNER_KINDS } from "./names.js";
export type { Interpreter, InterpreterSpec, Language, RunnerKind } from "./names.js";
