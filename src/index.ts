// The library surface: everything `import { ... } from "sandgate"` offers, named one by one.
// The rest of src/ is internal and may change; test/e2e/public-api.test.ts guards this list.

// Configuration: the defaults, then the config file (the one named, else $SANDGATE_CONFIG, else
// ./sandgate.json), then the environment: the same steps as the `sandgate` command.
export { loadConfig, locateConfigFile, validateConfig } from "./config/index.js";
export type {
  CodeModeConfig,
  ConfigLocation,
  Flavor,
  FlavorName,
  Limits,
  LoadConfigOptions,
  SandgateConfig,
  ServerConfig,
  UpstreamServerConfig,
  VolumeConfig,
} from "./config/index.js";

// The engine: sandboxes, sessions and their workspace files; its hooks (EngineHooks: before and after
// each run, file events) are how governance gates it, and how a library user's own policy can.
export { Engine } from "./execution/index.js";
export type {
  CommandRequest,
  EngineFiles,
  EngineHooks,
  EngineOptions,
  EngineJobs,
  EngineSessions,
  EnsuredSession,
  ErrorInfo,
  ExecuteRequest,
  ExecutionResult,
  FileEncoding,
  FileEventSink,
  NewFileEvent,
  JobCommandRequest,
  JobInfo,
  JobReadOptions,
  JobRequest,
  JobSnapshot,
  JobStatus,
  RunContext,
  RunHooks,
  RunVerdict,
  SessionInfo,
  SessionOptions,
  TokenCounts,
  ToolProvider,
  UpstreamCallSummary,
  WorkspaceEntry,
  WorkspaceFile,
  WorkspaceListing,
  WrittenFile,
} from "./execution/index.js";

// Code mode: upstream MCP servers, their tool catalog, and sandboxed code's calls to them.
export { CodeMode } from "./features/codemode/index.js";
export type { CodeModeOptions, UpstreamState, UpstreamStatus } from "./features/codemode/index.js";

// Governance: static analysis with risk scores, the approval broker, and the events an audit log
// (SQLite, hash-chained) and metrics consume. Pass governance.engineHooks() to Engine.create (its `hooks`) to gate executions.
export { Analyzer, ApprovalQueue, Governance } from "./features/governance/index.js";
export type {
  Action,
  Analysis,
  ApprovalBroker,
  ApprovalDecision,
  ApprovalRequest,
  Approver,
  Category,
  EventSink,
  Finding,
  GovernanceEvent,
  GovernanceOptions,
  RiskLevel,
  SecuritySummary,
  Severity,
} from "./features/governance/index.js";
export { openAuditLog, verifyAudit } from "./store/index.js";
export type { AuditLogOptions, AuditStore, VerifyResult } from "./store/index.js";

// Errors: one class with stable string codes, and the table mapping them to HTTP and JSON-RPC.
export { ERROR_CODES, httpStatusOf, isSandgateError, jsonRpcCodeOf, SandgateError } from "./errors/index.js";
export type { ErrorCode, SandgateErrorOptions } from "./errors/index.js";

// Languages sandboxed code may be written in.
export { LANGUAGES } from "./languages/index.js";
export type { Language } from "./languages/index.js";
