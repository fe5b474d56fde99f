// The execute feature: execute_code and execute_command (execute.code, execute.command), their
// arguments and engine requests, a result as the wire shows it, and the text an agent reads for one;
// and the languages it runs (execute.languages).
export { startJob } from "./background.js";
export { executeCodeDescription, type ExecuteHost } from "./description.js";
export { executeCode, executeCommand } from "./operations.js";
export { listLanguages, type LanguagesHost } from "./languages.js";
export { describeResult, renderResultText } from "./result-text.js";
export { executionResultSchema, toWireResult, type WireExecutionResult } from "./result-wire.js";
export { codeRequest, commandRequest, executeCodeInput, executeCommandInput } from "./wire.js";

import { listLanguages } from "./languages.js";
import { executeCode, executeCommand } from "./operations.js";

/** The operations of this feature, for the registry: first on MCP (execute_code, execute_command); the languages on REST only. */
export const executeOperations = [executeCode, executeCommand, listLanguages] as const;
