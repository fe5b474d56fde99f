// Public surface of the execution layer.
export { Engine } from "./engine.js";
export type { CommandRequest, EngineOptions, ToolProvider } from "./engine.js";
export type { EngineJobs, JobCommandRequest, JobInfo, JobReadOptions, JobRequest, JobSnapshot, JobStatus } from "./jobs.js";
export type { EngineSessions, EnsuredSession, SessionOptions } from "./engine-sessions.js";
export type { EngineFiles, TransferOptions, WorkspaceFile, WorkspaceListing, WrittenFile } from "./engine-files.js";
export type { DownloadedFile, UploadedFile } from "./workspace-transfer.js";
export type { ExecutionResult, ErrorInfo, ImageOutput, TokenCounts } from "./result-builder.js";
export type { AdmissionState } from "./admission.js";
export type { UpstreamCallRecord, UpstreamCallScope, UpstreamCallSummary } from "./upstream-call-scope.js";
export { countTokens, estimateJsonTokens, warmTokenizer } from "./tokens.js";
export { unknownLanguageError } from "./request.js";
export type { ExecuteRequest } from "./request.js";
export { LOCAL_OWNER } from "./sessions.js";
export type { SessionInfo } from "./sessions.js";
export { shapeOutput } from "./output.js";
export { isSavedStream, parseSavedOutputUri, SAVED_OUTPUT_PREFIX } from "./saved-outputs.js";
export type { SavedStream } from "./saved-outputs.js";
export type { FileEncoding, WorkspaceEntry } from "./workspace-files.js";
