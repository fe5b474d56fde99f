// The execute feature (so far): an execution result as the wire shows it, and the text an agent reads for one.
export { describeResult, renderResultText } from "./result-text.js";
export { executionResultSchema, toWireResult, type WireExecutionResult } from "./result-wire.js";
