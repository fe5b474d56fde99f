// The configuration schema: every setting sandgate reads, each declared once with setting()
// (type, default, environment variable, meaning). Types come from it; security rules live in its refinements.

import { availableParallelism, homedir, totalmem } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { INTERPRETER_SPECS, INTERPRETERS, LANGUAGES, RUNNER_KINDS, type Interpreter, type RunnerKind } from "../languages/names.js";
import { apiKeysCodec, keyScopesCodec, piiTypesCodec, poolCodec } from "./env-codecs.js";
import { nodePackagesCodec, nodePackagesSchema, pythonPackagesCodec, pythonPackagesSchema } from "./package-specs.js";
import { setting } from "./setting.js";
import { ACTIONS, CATEGORIES, SECURITY_LEVELS, SEVERITIES, type Severity } from "./security-terms.js";
import { TOOL_ACTIONS, TOOL_RULE_KEY, toolRulesCodec } from "./tool-policy.js";
import { DEFAULT_PII_TYPES, PII_TYPES } from "./pii-terms.js";

export { LANGUAGES, type Language } from "../languages/names.js";

export const FLAVOR_NAMES = ["small", "medium", "large"] as const;
export type FlavorName = (typeof FLAVOR_NAMES)[number];

export const flavorSchema = z
  .object({
    cpus: z.number().positive().max(64).describe("CPU share in cores (cgroup cpu quota)"),
    memoryMb: z.number().int().min(16).describe("Memory limit in MiB, capped by limits.maxMemoryMb"),
    processes: z.number().int().min(8).describe("Maximum number of processes and threads, capped by limits.maxProcesses"),
  })
  .strict();
export type Flavor = z.infer<typeof flavorSchema>;

const MIB = 1024 * 1024;

export const limitsSchema = z
  .object({
    maxExecutionTimeS: setting(z.number().positive(), {
      default: 300,
      env: "MAX_EXECUTION_TIME",
      doc: "Maximum wall-clock time of one call or background job, seconds; background jobs get it unless they ask for less",
    }),
    defaultExecutionTimeS: setting(z.number().positive().optional(), {
      defaultDoc: "30, or maxExecutionTimeS when that is lower",
      env: "SANDGATE_DEFAULT_TIMEOUT",
      doc: "Wall-clock time of a call that names no timeout, seconds; at most maxExecutionTimeS",
    }),
    maxMemoryMb: setting(z.number().int().min(16), {
      // Room for the large flavor's data work, but never more than a quarter of the machine for one sandbox.
      default: () => Math.max(256, Math.min(4096, Math.floor(totalmem() / 4 / MIB))),
      defaultDoc: "a quarter of the host's memory, between 256 and 4096",
      env: "MAX_MEMORY_MB",
      doc: "Maximum memory of one sandbox, MiB; caps every flavor's memoryMb",
    }),
    maxOutputSize: setting(z.number().int().min(256), {
      default: 65536,
      env: "MAX_OUTPUT_SIZE",
      doc: "Bytes of stdout and of stderr shown to the caller; the full output is kept in a file",
    }),
    outputCapBytes: setting(z.number().int().min(1024), { default: 10 * MIB, env: "SANDGATE_OUTPUT_CAP", doc: "Output after which the run is stopped as a flood, bytes" }),
    maxCodeBytes: setting(z.number().int().min(1), { default: MIB, env: "SANDGATE_MAX_CODE_BYTES", doc: "Largest accepted code, bytes" }),
    maxImageBytes: setting(z.number().int().min(1024).max(12 * MIB), { default: 2 * MIB, env: "SANDGATE_MAX_IMAGE_BYTES", doc: "Largest image a call returns (plots, sandgate.show), bytes; larger ones are dropped with a note" }),
    maxImagesPerCall: setting(z.number().int().min(0).max(64), { default: 8, env: "SANDGATE_MAX_IMAGES", doc: "Images one call returns at most; later ones are dropped with a note" }),
    maxProcesses: setting(z.number().int().min(8), { default: 256, env: "SANDGATE_MAX_PROCESSES", doc: "Maximum processes per sandbox; caps every flavor's count" }),
    maxCpus: setting(z.number().positive(), { default: 2, env: "SANDGATE_MAX_CPUS", doc: "Maximum CPU share per sandbox, cores; caps every flavor's share" }),
    maxFileSizeMb: setting(z.number().int().min(1), { default: 64, env: "SANDGATE_MAX_FILE_MB", doc: "Largest file code may write, MiB" }),
    maxWorkspaceMb: setting(z.number().int().min(1), { default: 256, env: "SANDGATE_MAX_WORKSPACE_MB", doc: "Largest workspace of a sandbox, MiB" }),
    maxUploadMb: setting(z.number().int().min(1), { default: 100, env: "SANDGATE_MAX_UPLOAD_MB", doc: "Largest REST file upload (raw or multipart body), MiB; counted as it streams, within the workspace's size" }),
    maxWorkspaceInodes: setting(z.number().int().min(16), {
      default: 50_000,
      env: "SANDGATE_MAX_WORKSPACE_INODES",
      doc: "Most files, directories and links a session workspace may hold",
    }),
    savedOutputsMb: setting(z.number().int().min(1), {
      default: 256,
      env: "SANDGATE_SAVED_OUTPUTS_MB",
      doc: "Total size of the saved full outputs of all calls, MiB; the oldest of the caller keeping the most go first",
    }),
    maxOpenFiles: setting(z.number().int().min(64), { default: 1024, env: "SANDGATE_MAX_OPEN_FILES", doc: "Open file descriptors per process" }),
    maxSandboxes: setting(z.number().int().min(1), {
      default: () => Math.max(8, 4 * availableParallelism()),
      defaultDoc: "4 per CPU, at least 8",
      env: "SANDGATE_MAX_SANDBOXES",
      doc: "Live sandboxes at once on this server: running, idle in sessions and warm in the pool",
    }),
    maxSandboxesPerIdentity: setting(z.number().int().min(1).optional(), {
      defaultDoc: "3/4 of maxSandboxes, at least 1",
      env: "SANDGATE_SANDBOXES_PER_CALLER",
      doc: "Live sandboxes one caller (API key name, or `local` without keys) may hold at once, so others keep room; beyond it the caller waits for one of its own",
    }),
    maxCommittedMemoryMb: setting(z.number().int().min(16), {
      default: () => Math.max(256, Math.floor((totalmem() * 0.6) / MIB)),
      defaultDoc: "60% of the host's memory, at least 256",
      env: "SANDGATE_MAX_COMMITTED_MB",
      doc: "Sum of the memory limits of all live sandboxes, MiB",
    }),
    queueWaitS: setting(z.number().min(0), {
      default: 5,
      env: "SANDGATE_QUEUE_WAIT",
      doc: "How long a call waits for room under maxSandboxes/maxCommittedMemoryMb before it gets 429, seconds",
    }),
  })
  .strict()
  .refine((l) => l.defaultExecutionTimeS === undefined || l.defaultExecutionTimeS <= l.maxExecutionTimeS, {
    message: "limits.defaultExecutionTimeS (SANDGATE_DEFAULT_TIMEOUT) must not exceed limits.maxExecutionTimeS (MAX_EXECUTION_TIME)",
    path: ["defaultExecutionTimeS"],
  });
export type Limits = z.infer<typeof limitsSchema>;

/** The timeout of a call that names none: the configured default, else 30 s, never above the maximum. */
export function defaultTimeoutS(limits: Pick<Limits, "defaultExecutionTimeS" | "maxExecutionTimeS">): number {
  return Math.min(limits.defaultExecutionTimeS ?? 30, limits.maxExecutionTimeS);
}

const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * What an API key may do: execute (run code, jobs, analysis, tool search), files (workspace files),
 * sessions (start, list, stop), admin (approvals and policy), audit (the audit trail and metrics).
 */
export const SCOPES = ["execute", "files", "sessions", "admin", "audit"] as const;
export type Scope = (typeof SCOPES)[number];

/** The scopes of the key named `name`: those listed in server.keyScopes, else every scope. */
export function scopesOfKey(server: { keyScopes: Record<string, readonly Scope[]> }, name: string): ReadonlySet<Scope> {
  // Own keys only: a key named like an Object.prototype member (constructor) is not listed by inheritance.
  return new Set((Object.hasOwn(server.keyScopes, name) ? server.keyScopes[name] : undefined) ?? SCOPES);
}

/** Every configured API key as [name, key]; server.apiKey is the key named "default". */
export function allApiKeys(server: { apiKey?: string | undefined; apiKeys: Record<string, string> }): [string, string][] {
  return [...(server.apiKey === undefined ? [] : [["default", server.apiKey] as [string, string]]), ...Object.entries(server.apiKeys)];
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** True when `host` only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host.toLowerCase()) || host.startsWith("127.");
}

/** The MCP tool sets a server can list: every tool, or only what a code-writing agent needs. */
export const TOOL_PROFILES = ["full", "codemode"] as const;
export type ToolProfile = (typeof TOOL_PROFILES)[number];

export const serverSchema = z
  .object({
    host: setting(z.string().min(1), { default: "127.0.0.1", env: "SANDGATE_HOST", doc: "Address `sandgate serve` binds to; anything but loopback requires an API key" }),
    port: setting(z.number().int().min(0).max(65535), { default: 7860, env: "SANDGATE_PORT", doc: "TCP port of `sandgate serve`, 0 for any free port" }),
    toolProfile: setting(z.enum(TOOL_PROFILES), {
      default: "full",
      env: "SANDGATE_TOOLS",
      doc: "MCP tools listed (HTTP and stdio): full (every tool) or codemode (only execute_code and search_tools; code reaches the rest); REST is not affected",
    }),
    apiKey: setting(z.string().min(16, "use at least 16 characters").optional(), {
      env: "SANDGATE_API_KEY",
      doc: "Bearer token required on every HTTP route except / and /health; its caller is named \"default\"; secret, masked in `config --print`",
    }),
    apiKeys: setting(
      z.record(z.string().regex(KEY_NAME, "key names use letters, digits, '.', '_' and '-'"), z.string().min(16, "use at least 16 characters")),
      {
        default: {},
        env: "SANDGATE_API_KEYS",
        codec: apiKeysCodec,
        doc: "Named API keys, name -> key, each at least 16 characters. The name is the caller's identity: sessions, MCP sessions and concurrency caps belong to it; secret, masked in `config --print`",
      },
    ),
    keyScopes: setting(z.record(z.string(), z.array(z.enum(SCOPES)).min(1)), {
      default: {},
      env: "SANDGATE_KEY_SCOPES",
      codec: keyScopesCodec(SCOPES),
      doc: "What each API key may do, key name -> scopes (execute, files, sessions, admin, audit); a key not listed has every scope",
    }),
    cors: z
      .object({
        enabled: setting(z.boolean(), { default: false, env: "MCP_ENABLE_CORS", doc: "Answer CORS preflights and add CORS headers" }),
        origins: setting(z.array(z.string().url()), {
          default: [],
          env: "SANDGATE_CORS_ORIGINS",
          doc: "Origins allowed by CORS and by the Origin check; required when CORS is enabled",
        }),
      })
      .strict()
      .refine((cors) => !cors.enabled || cors.origins.length > 0, {
        message:
          "CORS is enabled without a list of origins, which would let any web page run code here; list the origins allowed in server.cors.origins (SANDGATE_CORS_ORIGINS, comma-separated)",
        path: ["origins"],
      })
      .describe("Cross-origin access for browser clients; off by default"),
    allowedHosts: setting(z.array(z.string().min(1)), {
      default: [],
      env: "SANDGATE_ALLOWED_HOSTS",
      doc: "Host header values accepted besides the bind address and localhost names, against DNS rebinding",
    }),
    allowedOrigins: setting(z.array(z.string().url()), { default: [], env: "SANDGATE_ALLOWED_ORIGINS", doc: "Origin header values accepted besides the server's own" }),
    maxBodyBytes: setting(z.number().int().min(1024), { default: 2 * MIB, env: "SANDGATE_MAX_BODY_BYTES", doc: "Largest HTTP request body, bytes" }),
    bodyTimeoutS: setting(z.number().positive().max(300), {
      default: 10,
      env: "SANDGATE_BODY_TIMEOUT",
      doc: "Time a client has to send a request's headers and whole body, seconds; slower ones get 408 and are disconnected. A file transfer that moves less than 16 KiB in three times this is ended",
    }),
    maxConcurrentPerClient: setting(z.number().int().min(1), {
      default: 8,
      env: "SANDGATE_MAX_CONCURRENT",
      doc: "Executions one caller (API key name, or `local` without keys) may have running at once; more get 429",
    }),
    mcpSessionIdleS: setting(z.number().positive(), { default: 3600, doc: "An MCP Streamable HTTP session idle this long is closed, seconds" }),
    mcpUnusedSessionS: setting(z.number().positive(), {
      default: 60,
      env: "SANDGATE_MCP_UNUSED_TTL",
      doc: "An MCP Streamable HTTP session that has made no tools/call this long after initialize, and whose client holds no open GET stream, is closed, seconds",
    }),
    maxMcpSessions: setting(z.number().int().min(1), {
      default: 256,
      env: "SANDGATE_MAX_MCP_SESSIONS",
      doc: "MCP Streamable HTTP sessions open at once; at the cap a new initialize closes the least recently used idle session, and gets 429 only when all are busy",
    }),
    maxMcpSessionsPerIdentity: setting(z.number().int().min(1), {
      default: 32,
      env: "SANDGATE_MAX_MCP_SESSIONS_PER_KEY",
      doc: "MCP sessions one API key may hold; beyond it the key's own least recently used idle session is closed",
    }),
  })
  .strict()
  .refine((server) => server.apiKey === undefined || !("default" in server.apiKeys), {
    message: 'server.apiKey is the key named "default"; do not also list a key named "default" in server.apiKeys',
    path: ["apiKeys"],
  })
  // Without keys nobody is named, so scopes have nobody to apply to; with keys a stray name is a typo.
  .refine((server) => allApiKeys(server).length === 0 || Object.keys(server.keyScopes).every((name) => allApiKeys(server).some(([key]) => key === name)), {
    message: "server.keyScopes names a key that is not configured; list scopes only for names in server.apiKeys (or \"default\" for server.apiKey)",
    path: ["keyScopes"],
  })
  .refine((server) => new Set(allApiKeys(server).map(([, key]) => key)).size === allApiKeys(server).length, {
    message: "every API key must be different: the key decides who the caller is",
    path: ["apiKeys"],
  });
export type ServerConfig = z.infer<typeof serverSchema>;

export const volumeSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "use lowercase letters, digits, '_' and '-'")
      .describe("Name of the volume; sandboxes see it at /mnt/<name>"),
    hostPath: z
      .string()
      .startsWith("/", "must be an absolute path")
      .refine((p) => p.replace(/\/+$/, "") !== "", "must not be the host's root directory").describe("Host directory to mount; the sandbox user must be able to read it"),
    readOnly: z.boolean().default(true).describe("Mount read-only (default true)"),
    description: z.string().max(500).optional().describe("What the volume holds, shown to agents by get_volume_path"),
  })
  .strict();
export type VolumeConfig = z.infer<typeof volumeSchema>;

const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

const stringMap = z.record(z.string(), z.string());

// Entries follow the format desktop MCP clients use, so a pasted client config works. Keys
// those clients add for their own use (autoApprove, alwaysAllow, ...) are accepted and ignored.
export const stdioServerSchema = z
  .object({
    type: z.literal("stdio").optional().describe("Transport; implied by `command`"),
    command: z.string().min(1).describe("Program that runs the server, e.g. npx or node; found on sandgate's PATH"),
    args: z.array(z.string()).default([]).describe("Arguments of the program"),
    env: stringMap.default({}).describe("Environment of the server, added to a minimal safe environment; secret, never shown to sandboxes or logs"),
    cwd: z.string().startsWith("/", "must be an absolute path").optional().describe("Working directory of the server"),
    disabled: z.boolean().optional().describe("Skip this server"),
    timeoutS: z.number().positive().optional().describe("Per-call timeout for this server's tools, seconds; default codeMode.toolCallTimeoutS"),
  })
  .describe("An upstream MCP server sandgate starts and talks to over stdio");

export const httpServerSchema = z
  .object({
    type: z
      .enum(["http", "streamable-http", "streamableHttp", "sse"])
      .optional()
      .describe("Transport: Streamable HTTP with SSE as fallback (default), or `sse` for old servers only"),
    url: z
      .string()
      .url()
      .refine((u) => /^https?:$/.test(new URL(u).protocol), "must be an http or https URL")
      .describe("Endpoint of the server"),
    headers: stringMap.default({}).describe("HTTP headers sent with every request (e.g. Authorization); secret, never shown to sandboxes or logs"),
    disabled: z.boolean().optional().describe("Skip this server"),
    timeoutS: z.number().positive().optional().describe("Per-call timeout for this server's tools, seconds; default codeMode.toolCallTimeoutS"),
  })
  .describe("An upstream MCP server reached over HTTP");

export const upstreamServerSchema = z.union([stdioServerSchema, httpServerSchema], {
  errorMap: (issue, ctx) =>
    issue.code === "invalid_union" ? { message: "give `command` (a server started over stdio) or `url` (a server reached over HTTP)" } : { message: ctx.defaultError },
});
export type UpstreamServerConfig = z.infer<typeof upstreamServerSchema>;
export type StdioServerConfig = z.infer<typeof stdioServerSchema>;
export type HttpServerConfig = z.infer<typeof httpServerSchema>;

export const codeModeSchema = z
  .object({
    toolCallTimeoutS: setting(z.number().positive(), {
      default: 60,
      env: "SANDGATE_TOOL_TIMEOUT",
      doc: "Default timeout of one upstream tool call made by sandboxed code, seconds; a server's own timeoutS wins",
    }),
    maxToolCallsPerExecution: setting(z.number().int().min(1), { default: 500, env: "SANDGATE_MAX_TOOL_CALLS", doc: "Tool calls one execution may make; later calls fail" }),
    outputTokenBudget: setting(z.number().int().min(100), {
      default: 4000,
      env: "SANDGATE_OUTPUT_TOKENS",
      doc: "Tokens of output returned to the agent per call; beyond it output is shortened structurally and the full text stays in the workspace",
    }),
    connectTimeoutS: setting(z.number().positive(), { default: 30, doc: "Time an upstream server has to connect and list its tools at start-up, seconds" }),
    maxRestarts: setting(z.number().int().min(0), {
      default: 5,
      doc: "Restarts in a row of a crashed upstream server before it is given up; backoff doubles from 0.5 s to 30 s, and a server up for 10 minutes counts afresh",
    }),
    retryFailedS: setting(z.number().positive(), { default: 1, doc: "First retry of an upstream server that failed or was given up, seconds; doubles on every further retry up to retryFailedMaxS, each varied by ±20%" }),
    retryFailedMaxS: setting(z.number().min(0), { default: 300, doc: "Longest wait between retries of a failed upstream server, seconds; retries go on until sandgate stops; 0 never retries" }),
    maxUpstreamMessageBytes: setting(z.number().int().min(64 * 1024), {
      default: 10 * MIB,
      env: "SANDGATE_UPSTREAM_MAX_MESSAGE_BYTES",
      doc: "Largest JSON-RPC message (stdio line, JSON body, SSE event) an upstream server may send, bytes; one HTTP response may carry 4 times this; beyond it the call fails and the connection is reset",
    }),
    maxToolsPerServer: setting(z.number().int().min(1), {
      default: 1000,
      env: "SANDGATE_MAX_TOOLS_PER_SERVER",
      doc: "Tools one upstream server may list; a server listing more (or more than 4 times maxUpstreamMessageBytes of tool definitions) is marked failed with a message naming this cap",
    }),
    persistInferredSchemas: setting(z.boolean(), {
      default: true,
      env: "SANDGATE_PERSIST_INFERRED_SCHEMAS",
      doc: "Keep output schemas inferred from real tool results in SANDBOX_DIR/inferred-output-schemas.json across restarts; false neither reads nor writes it",
    }),
  })
  .strict()
  .describe("Code mode: upstream tools called from sandboxed code");
export type CodeModeConfig = z.infer<typeof codeModeSchema>;

export const approvalsSchema = z
  .object({
    timeoutS: setting(z.number().positive().max(24 * 3600), {
      default: 300,
      env: "SANDGATE_APPROVAL_TIMEOUT",
      doc: "How long a run or tool call that needs approval waits for a person (MCP elicitation, else POST /approvals/{id}) before it is denied, seconds",
    }),
    maxPending: setting(z.number().int().min(1), {
      default: 100,
      env: "SANDGATE_MAX_PENDING_APPROVALS",
      doc: "Approval requests waiting at once on this server; beyond it a request is denied at once",
    }),
    maxPendingPerClient: setting(z.number().int().min(1), {
      default: 10,
      env: "SANDGATE_MAX_PENDING_APPROVALS_PER_CALLER",
      doc: "Approval requests one caller may have waiting at once; beyond it its request is denied at once",
    }),
  })
  .strict()
  .describe("Approvals: how runs and tool calls that policy sends for approval wait for a person");
export type ApprovalsConfig = z.infer<typeof approvalsSchema>;

export const toolPolicySchema = z
  .object({
    default: setting(z.enum(TOOL_ACTIONS), {
      default: "allow",
      env: "SANDGATE_TOOL_POLICY_DEFAULT",
      doc: "What a call from sandboxed code to an upstream tool that no rule names gets",
    }),
    rules: setting(z.record(z.string().regex(TOOL_RULE_KEY, 'rule keys are "server" or "server.tool"'), z.enum(TOOL_ACTIONS)), {
      default: {},
      env: "SANDGATE_TOOL_POLICY",
      codec: toolRulesCodec,
      doc: 'Actions per upstream server ("server") or tool ("server.tool", the catalog id): allow, deny or approve; the most specific rule wins',
    }),
  })
  .strict()
  .describe("Upstream tool policy: which tools sandboxed code may call, may not call, or may call once a person approves");
export type ToolPolicyConfig = z.infer<typeof toolPolicySchema>;

// The words of findings and actions (security-terms.ts) are those governance's policy tables decide in.
const ACTION = z.enum(ACTIONS);
const categoryOverridesSchema = z.record(
  z.enum(CATEGORIES),
  z.union([ACTION, z.object(Object.fromEntries(SEVERITIES.map((s) => [s, ACTION.optional()])) as Record<Severity, z.ZodOptional<typeof ACTION>>).strict()]),
);

export const securitySchema = z
  .object({
    enabled: setting(z.boolean(), {
      default: true,
      env: "SANDGATE_GOVERNANCE",
      doc: "Static analysis and the code policy (`sandgate serve`, `stdio` and `exec`) and the audit log (`serve` and `stdio`); false turns them all off (results carry no `security`)",
    }),
    level: setting(z.enum(SECURITY_LEVELS), {
      default: "standard",
      env: "SANDGATE_SECURITY_LEVEL",
      doc: "Policy table from finding severities to actions (allow, warn, approve, block): permissive, standard or strict",
    }),
    categories: setting(categoryOverridesSchema, {
      default: {},
      doc: "Per finding category, an action or a table severity -> action that replaces the level's for that category",
    }),
    languages: setting(z.record(z.enum(LANGUAGES), z.object({ level: z.enum(SECURITY_LEVELS).optional(), categories: categoryOverridesSchema.optional() }).strict()), {
      default: {},
      doc: "Per language, a level and category overrides that replace the server-wide ones for code in that language",
    }),
    findingsShown: setting(z.number().int().min(0).max(100), {
      default: 5,
      env: "SANDGATE_SECURITY_FINDINGS",
      doc: "Findings an execute result's `security` shows at most (most severe first); the audit keeps all",
    }),
    analysisTimeoutMs: setting(z.number().int().min(100).max(600_000), {
      default: 10_000,
      env: "SANDGATE_ANALYSIS_TIMEOUT_MS",
      doc: "Longest static analysis of one program (run in worker threads, off the server's event loop); code whose analysis takes longer or fails gets one critical `analysis.failed` finding (blocked at standard and strict)",
    }),
  })
  .strict()
  .describe("Security analysis and the code policy");
export type SecurityConfig = z.infer<typeof securitySchema>;

export const auditSchema = z
  .object({
    enabled: setting(z.boolean(), {
      default: true,
      env: "SANDGATE_AUDIT",
      doc: "Record executions (their code included), tool calls, file operations, approvals, refusals and anomalies in the audit log of `sandgate serve`; false records nothing",
    }),
    path: setting(z.string().min(1).optional(), {
      env: "SANDGATE_AUDIT_PATH",
      defaultDoc: "SANDBOX_DIR/audit/audit.db",
      doc: "The audit log's SQLite file; its directory is created mode 0700 and the file 0600",
    }),
    retentionDays: setting(z.number().positive(), { default: 90, env: "SANDGATE_AUDIT_RETENTION_DAYS", doc: "Audit rows older than this are deleted (checked at start and hourly), days" }),
    maxMb: setting(z.number().int().min(1), {
      default: 1024,
      env: "SANDGATE_AUDIT_MAX_MB",
      doc: "Size of the audit log past which its oldest rows are deleted (checked at start, hourly and after each quarter of it written), MiB; never rows younger than minRetentionDays",
    }),
    minRetentionDays: setting(z.number().min(0), {
      default: 7,
      env: "SANDGATE_AUDIT_MIN_RETENTION_DAYS",
      doc: "Rows younger than this are never deleted for size: over maxMb with only such rows left, the log grows and an error is logged instead, days",
    }),
    codeBudgetMbPerDay: setting(z.number().min(0), {
      default: 64,
      env: "SANDGATE_AUDIT_CODE_BUDGET_MB",
      doc: "Programs longer than 2 KiB are kept once by sha256; new ones of one caller beyond this per day keep only their first 2 KiB and their hash in the row, MiB",
    }),
    queueMax: setting(z.number().int().min(1), {
      default: 10000,
      doc: "Audit rows waiting to be written past which new events wait for room (backpressure); rows are never dropped",
    }),
    writeTimeoutS: setting(z.number().positive(), {
      default: 10,
      doc: "How long an event waits for room in a full audit queue before its request fails with AUDIT_UNAVAILABLE, seconds",
    }),
  })
  .strict()
  .describe("The audit trail: a hash-chained SQLite log of what ran, who ran it and what it touched");
export type AuditConfig = z.infer<typeof auditSchema>;

export const metricsSchema = z
  .object({
    enabled: setting(z.boolean(), { default: true, env: "SANDGATE_METRICS", doc: "Serve Prometheus metrics at GET /metrics (API keys need the audit scope); false: no route, nothing counted" }),
  })
  .strict()
  .describe("Prometheus metrics of `sandgate serve`: executions, tool calls, policy, approvals, anomalies, pool and sessions");
export type MetricsConfig = z.infer<typeof metricsSchema>;

export const anomaliesSchema = z
  .object({
    burstExecutions: setting(z.number().int().min(1), { default: 30, doc: "Alert when one client starts more than this many executions within burstWindowS" }),
    burstWindowS: setting(z.number().positive(), { default: 10, doc: "The window of the burst rule, seconds" }),
    blockedAttempts: setting(z.number().int().min(1), { default: 5, doc: "Alert when one client has this many policy blocks and authentication failures within blockedWindowS" }),
    blockedWindowS: setting(z.number().positive(), { default: 300, doc: "The window of the repeated-blocks rule, seconds" }),
    toolCallFactor: setting(z.number().min(1), { default: 5, doc: "Alert when a client's upstream tool calls in a minute exceed this multiple of its own moving per-minute average" }),
    toolCallMinCalls: setting(z.number().int().min(1), { default: 20, doc: "...and exceed this many calls in that minute (the tool-call volume rule)" }),
    errorRate: setting(z.number().min(0).max(1), { default: 0.5, doc: "Alert when more than this share of a client's tool calls in a minute fail" }),
    errorMinCalls: setting(z.number().int().min(1), { default: 10, doc: "...once it made at least this many calls in that minute (the tool-error rule)" }),
    riskBaseline: setting(z.number().min(0).max(100), { default: 10, doc: "The risk-jump rule watches clients whose recent runs averaged a risk below this" }),
    riskBaselineRuns: setting(z.number().int().min(1).max(1000), { default: 20, doc: "How many recent runs make that average" }),
    riskJump: setting(z.number().min(0).max(100), { default: 60, doc: "Alert when such a client sends code of at least this risk" }),
    cooldownS: setting(z.number().min(0), { default: 300, doc: "One alert per rule and client per this many seconds" }),
    throttleS: setting(z.number().min(0), { default: 0, env: "SANDGATE_ANOMALY_THROTTLE", doc: "Refuse a client's executions for this many seconds after one of its anomalies (TOO_MANY_REQUESTS with retry_after); 0: alert only" }),
    maxClients: setting(z.number().int().min(16), { default: 10000, doc: "Clients whose recent activity the rules keep; the least recently seen are forgotten beyond it" }),
  })
  .strict()
  .describe("Anomaly rules over governance events: bursts, repeated refusals, tool-call volume and errors against a client's own baseline, risk jumps");
export type AnomaliesConfig = z.infer<typeof anomaliesSchema>;

// Kinds of personal data are PII's own vocabulary: a type-only module with no imports above config.
const PII_KIND = z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,31}$/, "kinds are a built-in type or a custom pattern's name");

export const piiSchema = z
  .object({
    enabled: setting(z.boolean(), {
      default: true,
      env: "SANDGATE_PII",
      doc: "Replace personal data in upstream tool results with stable tokens (`[EMAIL_1]`) before sandboxed code's output reaches the agent; tokens in the code's tool-call arguments are swapped back for the real values",
    }),
    types: setting(z.array(PII_KIND), {
      default: [...DEFAULT_PII_TYPES],
      env: "SANDGATE_PII_TYPES",
      codec: piiTypesCodec,
      doc: `Kinds tokenized by default: ${PII_TYPES.join(", ")} (name is opt-in), or a custom pattern's name`,
    }),
    tools: setting(
      z.record(
        z.string().regex(TOOL_RULE_KEY, 'keys are "server" or "server.tool"'),
        z.object({ enabled: z.boolean().optional(), types: z.array(PII_KIND).optional() }).strict(),
      ),
      { default: {}, doc: 'Per upstream server ("server") or tool ("server.tool"): tokenization on or off and which kinds; the most specific entry wins' },
    ),
    patterns: setting(
      z.array(
        z
          .object({
            name: PII_KIND,
            regex: z.string().min(1).max(2000),
            flags: z.string().regex(/^[imsuy]*$/).optional(),
          })
          .strict(),
      ),
      { default: [], doc: "Custom kinds: a name (its tokens are the name in capitals) and a JavaScript regular expression; add the name to types to use it" },
    ),
    maxTotalValues: setting(z.number().int().min(1), {
      default: 500_000,
      env: "SANDGATE_PII_TOTAL_VALUES",
      doc: "Values all PII vaults of the server hold together (about 450 bytes each); past it new values are redacted ([EMAIL_REDACTED])",
    }),
    maxCallerValues: setting(z.number().int().min(1), {
      default: 125_000,
      env: "SANDGATE_PII_CALLER_VALUES",
      doc: "Values the PII vaults of one caller (API key) hold together, so that one caller cannot use up maxTotalValues for everyone; past it that caller's new values are redacted",
    }),
  })
  .strict()
  .describe("PII tokenization: personal data in upstream tool results reaches the agent as tokens, and goes back to tools as real values");
export type PiiConfig = z.infer<typeof piiSchema>;

/** What the pool's count for each runner means; a runner without a line here fails to compile. */
const POOL_DOCS: Record<RunnerKind, string> = {
  python: "Warm Python sandboxes",
  javascript: "Warm JavaScript sandboxes; also serve TypeScript",
  bash: "Warm Bash sandboxes",
};

const poolSchema = z
  .object(
    Object.fromEntries(RUNNER_KINDS.map((kind) => [kind, z.number().int().min(0).max(64).describe(POOL_DOCS[kind])])) as Record<RunnerKind, z.ZodNumber>,
  )
  .strict();

const DEFAULT_FLAVORS: Record<FlavorName, Flavor> = {
  // Sized for data work (a DataFrame of a few million rows needs a GiB or two); limits.maxMemoryMb caps them to the host.
  small: { cpus: 0.5, memoryMb: 1024, processes: 32 },
  medium: { cpus: 1, memoryMb: 2048, processes: 64 },
  large: { cpus: 2, memoryMb: 4096, processes: 256 },
};

const DEFAULT_POOL: Record<RunnerKind, number> = { python: 2, javascript: 1, bash: 1 };

/** One `paths` entry per interpreter, with the variable and meaning its language spec gives. */
const interpreterPaths = Object.fromEntries(
  INTERPRETERS.map((name) => {
    const spec = INTERPRETER_SPECS[name];
    return [name, setting(z.string().optional(), { env: spec.env, defaultDoc: spec.defaultDoc, doc: `${spec.description}; installed outside /usr, its prefix is bound read-only` })];
  }),
) as Record<Interpreter, z.ZodOptional<z.ZodString>>;

export const configSchema = z
  .object({
    sandboxDir: setting(z.string().min(1), {
      // Root's home is closed to the unprivileged user sandboxes run as, so root keeps state in /var/lib.
      default: () => (process.getuid?.() === 0 ? "/var/lib/sandgate" : join(homedir(), ".sandgate")),
      defaultDoc: "~/.sandgate; /var/lib/sandgate for root",
      env: "SANDBOX_DIR",
      doc: "Directory for workspaces, saved outputs and runtime files",
    }),
    limits: limitsSchema.describe("Hard limits for every call and sandbox; requests may ask for less, never more"),
    flavors: setting(z.record(z.enum(FLAVOR_NAMES), flavorSchema), {
      default: DEFAULT_FLAVORS,
      defaultDoc: Object.entries(DEFAULT_FLAVORS)
        .map(([name, f]) => `${name}: ${f.cpus} CPU, ${f.memoryMb} MiB, ${f.processes} processes`)
        .join("; "),
      doc: "Named resource presets (cpus, memoryMb, processes); a call picks one with `flavor`; each is capped by limits.maxMemoryMb, maxCpus and maxProcesses",
    }),
    defaultFlavor: setting(z.enum(FLAVOR_NAMES), { default: "medium", env: "SANDGATE_DEFAULT_FLAVOR", doc: "Flavor used when a call names none" }),
    sessions: z
      .object({
        max: setting(z.number().int().min(1), { default: 32, env: "SANDGATE_MAX_SESSIONS", doc: "Maximum live sessions" }),
        idleTtlS: setting(z.number().positive(), { default: 900, env: "SANDGATE_SESSION_TTL", doc: "A session idle this long is stopped, seconds" }),
        maxPerIdentity: setting(z.number().int().min(1), {
          default: 8,
          env: "SANDGATE_SESSIONS_PER_CALLER",
          doc: "Live sessions one caller (API key name, or `local` without keys) may hold, so no one can take every slot",
        }),
        evictIdleAfterS: setting(z.number().min(0), {
          default: 60,
          env: "SANDGATE_EVICT_IDLE_AFTER",
          doc: "When calls wait for room under the server-wide caps, a session's sandbox unused this long is stopped to make room (one of a caller holding two more sandboxes than the waiting one goes at once); its files stay and its next call starts a fresh interpreter (state_reset). At the session maximum, a caller holding two more sessions gives up one idle this long. Seconds",
        }),
        workspaceFilesystem: setting(z.enum(["auto", "directory"]), {
          default: "auto",
          env: "SANDGATE_WORKSPACE_FS",
          doc: "\"auto\": each session workspace is its own loop-mounted ext4 filesystem of maxWorkspaceMb and maxWorkspaceInodes, so the kernel refuses writes past them (needs root, mkfs.ext4 and loop devices; probed once, else plain directories); \"directory\": plain directories, checked after each call, which only a filesystem bounds hard",
        }),
      })
      .strict()
      .describe("Sessions: sandboxes and workspaces kept between calls"),
    jobs: z
      .object({
        maxPerIdentity: setting(z.number().int().min(1), {
          default: 4,
          env: "SANDGATE_JOBS_PER_CALLER",
          doc: "Background jobs one caller may have running or waiting at once; more are refused with TOO_MANY_JOBS",
        }),
        max: setting(z.number().int().min(1), { default: 32, env: "SANDGATE_MAX_JOBS", doc: "Background jobs running or waiting at once on this server" }),
        keepFinishedS: setting(z.number().positive(), {
          default: 600,
          env: "SANDGATE_JOB_TTL",
          doc: "How long a finished background job (its status, output and result) stays readable, seconds",
        }),
      })
      .strict()
      .describe("Background jobs: calls made with background true, polled with get_job"),
    pool: setting(poolSchema, {
      default: DEFAULT_POOL,
      env: "SANDGATE_POOL",
      codec: poolCodec,
      doc: "Pre-started sandboxes per runner kind for stateless calls; a variable naming some runners leaves the others at their count",
    }),
    sandboxUser: z
      .object({
        uid: setting(z.number().int().min(1).max(4294967294), {
          default: 65534,
          env: "SANDGATE_SANDBOX_UID",
          doc: "Host uid sandboxes run as when sandgate runs as root; never 0, a dedicated unused uid is best",
        }),
        gid: setting(z.number().int().min(1).max(4294967294), { default: 65534, env: "SANDGATE_SANDBOX_GID", doc: "Host gid sandboxes run as when sandgate runs as root; never 0" }),
      })
      .strict()
      .describe("Host uid/gid that sandboxes run as when sandgate runs as root, never 0"),
    logLevel: setting(z.enum(["debug", "info", "warn", "error", "silent"]), {
      default: "warn",
      env: "SANDGATE_LOG_LEVEL",
      doc: "Log level of the JSON lines sandgate writes to stderr",
    }),
    outputTtlS: setting(z.number().positive(), {
      default: 24 * 3600,
      env: "SANDGATE_OUTPUT_TTL",
      doc: "How long saved full outputs (sandgate://outputs/{id}/{stream}) are kept, seconds",
    }),
    cgroups: setting(z.enum(["auto", "off"]), { default: "auto", env: "SANDGATE_CGROUPS", doc: "Use cgroups for limits when the host allows; \"off\": rlimits only" }),
    paths: z
      .object({
        bwrap: setting(z.string().optional(), { env: "SANDGATE_BWRAP", defaultDoc: "/usr/bin/bwrap", doc: "bubblewrap binary" }),
        ...interpreterPaths,
      })
      .strict()
      .describe("Where the programs sandgate runs are; absolute paths"),
    server: serverSchema.describe("The HTTP server of `sandgate serve`"),
    volumes: setting(
      z.array(volumeSchema).refine((list) => new Set(list.map((v) => v.name)).size === list.length, "volume names must be unique"),
      { default: [], doc: "Host directories mounted into every sandbox at /mnt/<name>, listed to agents by get_volume_path" },
    ),
    mcpServers: setting(z.record(z.string().regex(SERVER_NAME, "server names use letters, digits, '_' and '-' (no dots)"), upstreamServerSchema), {
      default: {},
      doc: "Upstream MCP servers whose tools sandboxed code can call, keyed by name (the format of desktop MCP clients' config)",
    }),
    codeMode: codeModeSchema,
    metrics: metricsSchema,
    anomalies: anomaliesSchema,
    pii: piiSchema,
    audit: auditSchema,
    security: securitySchema,
    approvals: approvalsSchema,
    toolPolicy: toolPolicySchema,
    python: z
      .object({
        packages: setting(pythonPackagesSchema, {
          default: [],
          env: "SANDGATE_PYTHON_PACKAGES",
          codec: pythonPackagesCodec,
          doc: "Python packages every sandbox can import, installed on the host by `sandgate packages sync` (Debian's python3-* packages when present, else pip) and mounted read-only",
        }),
      })
      .strict()
      .describe("The admin's Python package set"),
    node: z
      .object({
        packages: setting(nodePackagesSchema, {
          default: [],
          env: "SANDGATE_NODE_PACKAGES",
          codec: nodePackagesCodec,
          doc: "npm packages every JavaScript and TypeScript sandbox can require or import, installed on the host by `sandgate packages sync` and mounted read-only",
        }),
      })
      .strict()
      .describe("The admin's Node package set"),
  })
  .strict()
  .refine((c) => c.limits.maxOutputSize <= c.limits.outputCapBytes, {
    message: "limits.maxOutputSize must not exceed limits.outputCapBytes",
    path: ["limits", "maxOutputSize"],
  })
  // Below one sandbox of the default flavor, every call without a smaller flavor would be refused.
  .refine((c) => c.limits.maxCommittedMemoryMb >= Math.min(c.limits.maxMemoryMb, c.flavors[c.defaultFlavor]?.memoryMb ?? c.limits.maxMemoryMb), {
    message: "limits.maxCommittedMemoryMb must hold at least one sandbox of the default flavor (its memoryMb, at most limits.maxMemoryMb)",
    path: ["limits", "maxCommittedMemoryMb"],
  })
  .superRefine((c, ctx) => checkPiiKinds(c.pii, ctx));
export type SandgateConfig = z.infer<typeof configSchema>;

/**
 * Every kind pii names is a built-in one or a custom pattern's, and a pattern does not take a built-in
 * kind's name (detection would ignore it): at start-up, not as an unknown kind on the first tool call.
 */
function checkPiiKinds(pii: PiiConfig, ctx: z.RefinementCtx): void {
  const builtIn: readonly string[] = PII_TYPES;
  const names = pii.patterns.map((p) => p.name);
  pii.patterns.forEach((p, i) => {
    if (builtIn.includes(p.name)) ctx.addIssue({ code: "custom", path: ["pii", "patterns", i, "name"], message: `"${p.name}" is a built-in kind; give the pattern a name of its own` });
    else if (names.indexOf(p.name) !== i) ctx.addIssue({ code: "custom", path: ["pii", "patterns", i, "name"], message: `a pattern named "${p.name}" comes earlier; names must be unique` });
  });
  const known = `use ${[...builtIn, ...names].join(", ")}, or add a pattern of that name to pii.patterns`;
  const check = (kinds: readonly string[], path: (string | number)[]): void => {
    kinds.forEach((kind, i) => {
      if (!builtIn.includes(kind) && !names.includes(kind)) ctx.addIssue({ code: "custom", path: [...path, i], message: `unknown PII kind "${kind}"; ${known}` });
    });
  };
  check(pii.types, ["pii", "types"]);
  for (const [key, rule] of Object.entries(pii.tools)) check(rule.types ?? [], ["pii", "tools", key, "types"]);
}
