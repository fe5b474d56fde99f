// Public surface of the execution layer.
export { Engine } from "./engine.js";
export type { CommandRequest, EngineOptions, ExecutionResult, ErrorInfo } from "./engine.js";
export { executeRequestSchema, checkRequest, isLanguage } from "./request.js";
export type { ExecuteRequest, ExecuteInput } from "./request.js";
export { SessionManager } from "./sessions.js";
export type { SessionInfo } from "./sessions.js";
export { shapeOutput } from "./output.js";
export { prepareCode } from "./prepare-code.js";
export type { FileEncoding, WorkspaceEntry, WorkspaceFileLimits } from "./workspace-files.js";
