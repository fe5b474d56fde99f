// The configuration schema: every setting sandgate reads, with its default and meaning.
// Types come from this schema; security rules live in its refinements.

import { z } from "zod";

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

export const limitsSchema = z
  .object({
    maxExecutionTimeS: z.number().positive().describe("Default and maximum wall-clock time of one call, seconds (MAX_EXECUTION_TIME)"),
    maxMemoryMb: z.number().int().min(16).describe("Maximum memory of one sandbox, MiB (MAX_MEMORY_MB)"),
    maxOutputSize: z.number().int().min(256).describe("Bytes of stdout and of stderr shown to the caller; the full output is kept in a file (MAX_OUTPUT_SIZE)"),
    outputCapBytes: z.number().int().min(1024).describe("Output after which the run is stopped as a flood, bytes (SANDGATE_OUTPUT_CAP)"),
    maxCodeBytes: z.number().int().min(1).describe("Largest accepted code, bytes (SANDGATE_MAX_CODE_BYTES)"),
    maxProcesses: z.number().int().min(8).describe("Maximum processes per sandbox (SANDGATE_MAX_PROCESSES)"),
    maxCpus: z.number().positive().describe("Maximum CPU share per sandbox, cores (SANDGATE_MAX_CPUS)"),
    maxFileSizeMb: z.number().int().min(1).describe("Largest file code may write, MiB (SANDGATE_MAX_FILE_MB)"),
    maxWorkspaceMb: z.number().int().min(1).describe("Largest workspace of a sandbox, MiB (SANDGATE_MAX_WORKSPACE_MB)"),
    maxWorkspaceInodes: z.number().int().min(16).describe("Most files, directories and links a session workspace may hold (SANDGATE_MAX_WORKSPACE_INODES)"),
    savedOutputsMb: z.number().int().min(1).describe("Total size of the saved full outputs of all calls, MiB; the oldest of the caller keeping the most go first (SANDGATE_SAVED_OUTPUTS_MB)"),
    maxOpenFiles: z.number().int().min(64).describe("Open file descriptors per process (SANDGATE_MAX_OPEN_FILES)"),
    maxSandboxes: z
      .number()
      .int()
      .min(1)
      .describe("Live sandboxes at once on this server: running, idle in sessions and warm in the pool (SANDGATE_MAX_SANDBOXES; default 4 per CPU, at least 8)"),
    maxSandboxesPerIdentity: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "Live sandboxes one caller (API key name, MCP session or REST peer) may hold at once, so others keep room; beyond it the caller waits for one of its own (SANDGATE_SANDBOXES_PER_CALLER; default 3/4 of maxSandboxes, at least 1)",
      ),
    maxCommittedMemoryMb: z
      .number()
      .int()
      .min(16)
      .describe("Sum of the memory limits of all live sandboxes, MiB (SANDGATE_MAX_COMMITTED_MB; default 60% of the host's memory)"),
    queueWaitS: z
      .number()
      .min(0)
      .describe("How long a call waits for room under maxSandboxes/maxCommittedMemoryMb before it gets 429, seconds (SANDGATE_QUEUE_WAIT)"),
  })
  .strict();
export type Limits = z.infer<typeof limitsSchema>;

const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Every configured API key as [name, key]; server.apiKey is the key named "default". */
export function allApiKeys(server: { apiKey?: string | undefined; apiKeys: Record<string, string> }): [string, string][] {
  return [...(server.apiKey === undefined ? [] : [["default", server.apiKey] as [string, string]]), ...Object.entries(server.apiKeys)];
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** True when `host` only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host.toLowerCase()) || host.startsWith("127.");
}

export const serverSchema = z
  .object({
    host: z.string().min(1).describe("Address `sandgate serve` binds to (SANDGATE_HOST); anything but loopback requires apiKey"),
    port: z.number().int().min(0).max(65535).describe("TCP port of `sandgate serve`, 0 for any free port (SANDGATE_PORT)"),
    apiKey: z
      .string()
      .min(16, "use at least 16 characters")
      .optional()
      .describe("Bearer token required on every HTTP route except / and /health (SANDGATE_API_KEY); its caller is named \"default\"; secret, masked in `config --print`"),
    apiKeys: z
      .record(z.string().regex(KEY_NAME, "key names use letters, digits, '.', '_' and '-'"), z.string().min(16, "use at least 16 characters"))
      .describe(
        "Named API keys, name -> key (SANDGATE_API_KEYS=\"alice:key1,bob:key2\"). The name is the caller's identity: sessions, MCP sessions and concurrency caps belong to it; secret, masked in `config --print`",
      ),
    cors: z
      .object({
        enabled: z.boolean().describe("Answer CORS preflights and add CORS headers (MCP_ENABLE_CORS)"),
        origins: z
          .array(z.string().url())
          .describe("Origins allowed by CORS and by the Origin check (SANDGATE_CORS_ORIGINS, comma-separated); required when CORS is enabled"),
      })
      .strict()
      .refine((cors) => !cors.enabled || cors.origins.length > 0, {
        message:
          "CORS is enabled without a list of origins, which would let any web page run code here; list the origins allowed in server.cors.origins (SANDGATE_CORS_ORIGINS, comma-separated)",
        path: ["origins"],
      })
      .describe("Cross-origin access for browser clients; off by default"),
    allowedHosts: z
      .array(z.string().min(1))
      .describe("Host header values accepted besides the bind address and localhost names (DNS rebinding protection; SANDGATE_ALLOWED_HOSTS, comma-separated)"),
    allowedOrigins: z
      .array(z.string().url())
      .describe("Origin header values accepted besides the server's own (SANDGATE_ALLOWED_ORIGINS, comma-separated)"),
    maxBodyBytes: z.number().int().min(1024).describe("Largest HTTP request body, bytes (SANDGATE_MAX_BODY_BYTES)"),
    bodyTimeoutS: z
      .number()
      .positive()
      .max(300)
      .describe("Time a client has to send a request's headers and whole body, seconds; slower ones get 408 and are disconnected (SANDGATE_BODY_TIMEOUT)"),
    maxConcurrentPerClient: z
      .number()
      .int()
      .min(1)
      .describe("Executions one caller (API key name; without keys the MCP session or the REST peer address) may have running at once; more get 429 (SANDGATE_MAX_CONCURRENT)"),
    mcpSessionIdleS: z.number().positive().describe("An MCP Streamable HTTP session idle this long is closed, seconds"),
    mcpUnusedSessionS: z
      .number()
      .positive()
      .describe("An MCP Streamable HTTP session that has made no tools/call this long after initialize, and whose client holds no open GET stream, is closed, seconds (SANDGATE_MCP_UNUSED_TTL)"),
    maxMcpSessions: z
      .number()
      .int()
      .min(1)
      .describe(
        "MCP Streamable HTTP sessions open at once; at the cap a new initialize closes the least recently used idle session, and gets 429 only when all are busy (SANDGATE_MAX_MCP_SESSIONS)",
      ),
    maxMcpSessionsPerIdentity: z
      .number()
      .int()
      .min(1)
      .describe("MCP sessions one API key may hold; beyond it the key's own least recently used idle session is closed (SANDGATE_MAX_MCP_SESSIONS_PER_KEY)"),
  })
  .strict()
  .refine((server) => server.apiKey === undefined || !("default" in server.apiKeys), {
    message: 'server.apiKey is the key named "default"; do not also list a key named "default" in server.apiKeys',
    path: ["apiKeys"],
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
    toolCallTimeoutS: z.number().positive().describe("Default timeout of one upstream tool call made by sandboxed code, seconds (SANDGATE_TOOL_TIMEOUT)"),
    maxToolCallsPerExecution: z.number().int().min(1).describe("Tool calls one execution may make; later calls fail (SANDGATE_MAX_TOOL_CALLS)"),
    outputTokenBudget: z
      .number()
      .int()
      .min(100)
      .describe("Tokens of output returned to the agent per call; beyond it output is shortened structurally and the full text stays in the workspace (SANDGATE_OUTPUT_TOKENS)"),
    connectTimeoutS: z.number().positive().describe("Time an upstream server has to connect and list its tools at start-up, seconds"),
    maxRestarts: z.number().int().min(0).describe("Restarts in a row of a crashed upstream server before it is given up; backoff doubles from 0.5 s to 30 s, and a server up for 10 minutes counts afresh"),
    maxUpstreamMessageBytes: z
      .number()
      .int()
      .min(64 * 1024)
      .describe("Largest JSON-RPC message (stdio line, JSON body, SSE event) an upstream server may send, bytes; one HTTP response may carry 4 times this; beyond it the call fails and the connection is reset (SANDGATE_UPSTREAM_MAX_MESSAGE_BYTES)"),
    maxToolsPerServer: z
      .number()
      .int()
      .min(1)
      .describe("Tools one upstream server may list; a server listing more (or more than 4 times maxUpstreamMessageBytes of tool definitions) is marked failed with a message naming this cap (SANDGATE_MAX_TOOLS_PER_SERVER)"),
    persistInferredSchemas: z
      .boolean()
      .describe("Keep output schemas inferred from real tool results in SANDBOX_DIR/inferred-output-schemas.json across restarts; false neither reads nor writes it (SANDGATE_PERSIST_INFERRED_SCHEMAS)"),
  })
  .strict()
  .describe("Code mode: upstream tools called from sandboxed code");
export type CodeModeConfig = z.infer<typeof codeModeSchema>;

export const configSchema = z
  .object({
    sandboxDir: z.string().min(1).describe("Directory for workspaces, saved outputs and runtime files (SANDBOX_DIR)"),
    limits: limitsSchema.describe("Hard limits for every call and sandbox; requests may ask for less, never more"),
    flavors: z.record(z.enum(FLAVOR_NAMES), flavorSchema).describe("Named resource presets; a call picks one with `flavor`"),
    defaultFlavor: z.enum(FLAVOR_NAMES).describe("Flavor used when a call names none (SANDGATE_DEFAULT_FLAVOR)"),
    sessions: z
      .object({
        max: z.number().int().min(1).describe("Maximum live sessions (SANDGATE_MAX_SESSIONS)"),
        idleTtlS: z.number().positive().describe("A session idle this long is stopped, seconds (SANDGATE_SESSION_TTL)"),
        maxPerIdentity: z
          .number()
          .int()
          .min(1)
          .describe("Live sessions one caller (API key name, MCP session or REST peer) may hold, so no one can take every slot (SANDGATE_SESSIONS_PER_CALLER)"),
        evictIdleAfterS: z
          .number()
          .min(0)
          .describe(
            "When calls wait for room under the server-wide caps, a session's sandbox unused this long is stopped to make room; its files stay and its next call starts a fresh interpreter (state_reset), seconds (SANDGATE_EVICT_IDLE_AFTER)",
          ),
        workspaceFilesystem: z
          .enum(["auto", "directory"])
          .describe(
            "\"auto\": each session workspace is its own loop-mounted ext4 filesystem of maxWorkspaceMb and maxWorkspaceInodes, so the kernel refuses writes past them (needs root, mkfs.ext4 and loop devices; probed once, else plain directories); \"directory\": plain directories, checked after each call, which only a filesystem bounds hard (SANDGATE_WORKSPACE_FS)",
          ),
      })
      .strict()
      .describe("Sessions: sandboxes and workspaces kept between calls"),
    pool: z
      .object({
        python: z.number().int().min(0).max(64).describe("Warm Python sandboxes"),
        javascript: z.number().int().min(0).max(64).describe("Also serves TypeScript"),
        bash: z.number().int().min(0).max(64).describe("Warm Bash sandboxes"),
      })
      .strict()
      .describe("Pre-started sandboxes per runner kind for stateless calls (SANDGATE_POOL, e.g. python=2,javascript=1,bash=1)"),
    sandboxUser: z
      .object({
        uid: z.number().int().min(1).max(4294967294).describe("Host uid (SANDGATE_SANDBOX_UID)"),
        gid: z.number().int().min(1).max(4294967294).describe("Host gid (SANDGATE_SANDBOX_GID)"),
      })
      .strict()
      .describe("Host uid/gid that sandboxes run as when sandgate runs as root, never 0 (SANDGATE_SANDBOX_UID, SANDGATE_SANDBOX_GID)"),
    logLevel: z.enum(["debug", "info", "warn", "error", "silent"]).describe("Log level of the JSON lines sandgate writes to stderr (SANDGATE_LOG_LEVEL)"),
    outputTtlS: z.number().positive().describe("How long saved full outputs (sandgate://outputs/{id}/{stream}) are kept, seconds (SANDGATE_OUTPUT_TTL)"),
    cgroups: z.enum(["auto", "off"]).describe("Use cgroups for limits when the host allows (SANDGATE_CGROUPS)"),
    paths: z
      .object({
        bwrap: z.string().optional().describe("bubblewrap binary (SANDGATE_BWRAP); default: /usr/bin/bwrap"),
        python: z.string().optional().describe("Python interpreter run in sandboxes (SANDGATE_PYTHON); default: /usr/bin/python3"),
        node: z.string().optional().describe("Node.js binary run in sandboxes (SANDGATE_NODE); default: /usr/bin/node, else the one running sandgate"),
        bash: z.string().optional().describe("bash run in sandboxes (SANDGATE_BASH); default: /usr/bin/bash"),
      })
      .strict()
      .describe("Where the programs sandgate runs are; absolute paths"),
    server: serverSchema.describe("The HTTP server of `sandgate serve`"),
    volumes: z
      .array(volumeSchema)
      .refine((list) => new Set(list.map((v) => v.name)).size === list.length, "volume names must be unique")
      .describe("Host directories mounted into every sandbox at /mnt/<name>, listed to agents by get_volume_path"),
    mcpServers: z
      .record(z.string().regex(SERVER_NAME, "server names use letters, digits, '_' and '-' (no dots)"), upstreamServerSchema)
      .describe("Upstream MCP servers whose tools sandboxed code can call, keyed by name (the format of desktop MCP clients' config)"),
    codeMode: codeModeSchema,
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
  });
export type SandgateConfig = z.infer<typeof configSchema>;
