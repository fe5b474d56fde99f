// The only module that reads process.env: every variable sandgate honours, with its default.
// A malformed value fails loudly at start-up instead of being silently ignored.

import { availableParallelism, homedir, totalmem } from "node:os";
import { join } from "node:path";
import { SandgateError } from "../errors/index.js";
import { readConfigFile } from "./file.js";
import { locateConfigFile } from "./locate.js";
import type { SandgateConfig } from "./schema.js";
import { validateConfig } from "./validate.js";

type Env = Record<string, string | undefined>;

function parseNumberEnv(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value)) {
    throw new SandgateError("CONFIG_INVALID", `environment variable ${name}=${JSON.stringify(raw)} is not a number`, {
      data: { variable: name },
    });
  }
  return value;
}

function parsePoolEnv(env: Env, fallback: SandgateConfig["pool"]): SandgateConfig["pool"] {
  const raw = env.SANDGATE_POOL;
  if (raw === undefined || raw.trim() === "") return fallback;
  const pool = { ...fallback };
  for (const part of raw.split(",")) {
    const [name, count] = part.split("=").map((s) => s.trim());
    if ((name !== "python" && name !== "javascript" && name !== "bash") || count === undefined || !/^\d+$/.test(count)) {
      throw new SandgateError(
        "CONFIG_INVALID",
        `SANDGATE_POOL entry ${JSON.stringify(part)} is not of the form python=N, javascript=N or bash=N`,
        { data: { variable: "SANDGATE_POOL" } },
      );
    }
    pool[name] = Number(count);
  }
  return pool;
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  const trimmed = value?.trim();
  return trimmed ? ({ [key]: trimmed } as Record<K, string>) : {};
}

function parseBooleanEnv(env: Env, name: string): boolean | undefined {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return undefined;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new SandgateError("CONFIG_INVALID", `environment variable ${name}=${JSON.stringify(env[name])} is not a boolean (use true or false)`, {
    data: { variable: name },
  });
}

function parseListEnv(env: Env, name: string): string[] | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  return raw.split(",").map((s) => s.trim()).filter(Boolean);
}

/** SANDGATE_API_KEYS="alice:key1,bob:key2": named keys; the value never appears in an error. */
function parseApiKeysEnv(env: Env): Record<string, string> | undefined {
  const raw = env.SANDGATE_API_KEYS?.trim();
  if (!raw) return undefined;
  const keys: Record<string, string> = {};
  for (const [index, part] of raw.split(",").entries()) {
    const colon = part.indexOf(":");
    const name = colon === -1 ? "" : part.slice(0, colon).trim();
    const key = colon === -1 ? "" : part.slice(colon + 1).trim();
    if (name === "" || key === "" || name in keys) {
      throw new SandgateError(
        "CONFIG_INVALID",
        `SANDGATE_API_KEYS entry ${index + 1} is not of the form name:key${name in keys ? ` (the name ${JSON.stringify(name)} appears twice)` : ""}`,
        { data: { variable: "SANDGATE_API_KEYS" } },
      );
    }
    keys[name] = key;
  }
  return keys;
}

/** Every setting at its default; SANDBOX_DIR's default depends on who runs sandgate. */
export function defaultConfig(): SandgateConfig {
  return {
    // Root's home is closed to the unprivileged user sandboxes run as, so root keeps state in /var/lib.
    sandboxDir: process.getuid?.() === 0 ? "/var/lib/sandgate" : join(homedir(), ".sandgate"),
    limits: {
      maxExecutionTimeS: 30,
      maxMemoryMb: 256,
      maxOutputSize: 65536,
      outputCapBytes: 10 * 1024 * 1024,
      maxCodeBytes: 1024 * 1024,
      maxProcesses: 256,
      maxCpus: 2,
      maxFileSizeMb: 64,
      maxWorkspaceMb: 256,
      maxWorkspaceInodes: 50_000,
      savedOutputsMb: 256,
      maxOpenFiles: 1024,
      maxSandboxes: Math.max(8, 4 * availableParallelism()),
      maxCommittedMemoryMb: Math.max(256, Math.floor((totalmem() * 0.6) / 1048576)),
      queueWaitS: 5,
    },
    flavors: {
      small: { cpus: 0.5, memoryMb: 128, processes: 32 },
      medium: { cpus: 1, memoryMb: 256, processes: 64 },
      large: { cpus: 2, memoryMb: 1024, processes: 256 },
    },
    defaultFlavor: "medium",
    sessions: { max: 32, idleTtlS: 900, maxPerIdentity: 8, evictIdleAfterS: 60, workspaceFilesystem: "auto" },
    pool: { python: 2, javascript: 1, bash: 1 },
    sandboxUser: { uid: 65534, gid: 65534 },
    logLevel: "warn",
    outputTtlS: 24 * 3600,
    cgroups: "auto",
    paths: {},
    server: {
      host: "127.0.0.1",
      port: 7860,
      cors: { enabled: false, origins: [] },
      allowedHosts: [],
      allowedOrigins: [],
      maxBodyBytes: 2 * 1024 * 1024,
      bodyTimeoutS: 10,
      apiKeys: {},
      maxConcurrentPerClient: 8,
      mcpSessionIdleS: 3600,
      mcpUnusedSessionS: 60,
      maxMcpSessions: 256,
      maxMcpSessionsPerIdentity: 32,
    },
    volumes: [],
    mcpServers: {},
    codeMode: { toolCallTimeoutS: 60, maxToolCallsPerExecution: 500, outputTokenBudget: 4000, connectTimeoutS: 30, maxRestarts: 5, maxUpstreamMessageBytes: 10 * 1024 * 1024, maxToolsPerServer: 1000, persistInferredSchemas: true },
  };
}

/** Applies the environment variables that are set on top of `base`; unset ones leave it alone. */
export function applyEnv(base: SandgateConfig, env: Env): SandgateConfig {
  const num = (name: string, current: number): number => parseNumberEnv(env, name, current);
  const str = <T extends string>(name: string, current: T): T => (env[name]?.trim() || current) as T;
  const { limits, sessions, sandboxUser, server } = base;
  const cors = parseBooleanEnv(env, "MCP_ENABLE_CORS");
  const apiKey = env.SANDGATE_API_KEY?.trim();
  const perCaller = env.SANDGATE_SANDBOXES_PER_CALLER?.trim() ? num("SANDGATE_SANDBOXES_PER_CALLER", 0) : limits.maxSandboxesPerIdentity;
  return {
    ...base,
    sandboxDir: str("SANDBOX_DIR", base.sandboxDir),
    limits: {
      maxExecutionTimeS: num("MAX_EXECUTION_TIME", limits.maxExecutionTimeS),
      maxMemoryMb: num("MAX_MEMORY_MB", limits.maxMemoryMb),
      maxOutputSize: num("MAX_OUTPUT_SIZE", limits.maxOutputSize),
      outputCapBytes: num("SANDGATE_OUTPUT_CAP", limits.outputCapBytes),
      maxCodeBytes: num("SANDGATE_MAX_CODE_BYTES", limits.maxCodeBytes),
      maxProcesses: num("SANDGATE_MAX_PROCESSES", limits.maxProcesses),
      maxCpus: num("SANDGATE_MAX_CPUS", limits.maxCpus),
      maxFileSizeMb: num("SANDGATE_MAX_FILE_MB", limits.maxFileSizeMb),
      maxWorkspaceMb: num("SANDGATE_MAX_WORKSPACE_MB", limits.maxWorkspaceMb),
      maxWorkspaceInodes: num("SANDGATE_MAX_WORKSPACE_INODES", limits.maxWorkspaceInodes),
      savedOutputsMb: num("SANDGATE_SAVED_OUTPUTS_MB", limits.savedOutputsMb),
      maxOpenFiles: num("SANDGATE_MAX_OPEN_FILES", limits.maxOpenFiles),
      maxSandboxes: num("SANDGATE_MAX_SANDBOXES", limits.maxSandboxes),
      ...(perCaller === undefined ? {} : { maxSandboxesPerIdentity: perCaller }),
      maxCommittedMemoryMb: num("SANDGATE_MAX_COMMITTED_MB", limits.maxCommittedMemoryMb),
      queueWaitS: num("SANDGATE_QUEUE_WAIT", limits.queueWaitS),
    },
    defaultFlavor: str("SANDGATE_DEFAULT_FLAVOR", base.defaultFlavor),
    sessions: {
      max: num("SANDGATE_MAX_SESSIONS", sessions.max),
      idleTtlS: num("SANDGATE_SESSION_TTL", sessions.idleTtlS),
      maxPerIdentity: num("SANDGATE_SESSIONS_PER_CALLER", sessions.maxPerIdentity),
      evictIdleAfterS: num("SANDGATE_EVICT_IDLE_AFTER", sessions.evictIdleAfterS),
      workspaceFilesystem: str("SANDGATE_WORKSPACE_FS", sessions.workspaceFilesystem),
    },
    pool: parsePoolEnv(env, base.pool),
    sandboxUser: { uid: num("SANDGATE_SANDBOX_UID", sandboxUser.uid), gid: num("SANDGATE_SANDBOX_GID", sandboxUser.gid) },
    logLevel: str("SANDGATE_LOG_LEVEL", base.logLevel),
    outputTtlS: num("SANDGATE_OUTPUT_TTL", base.outputTtlS),
    cgroups: str("SANDGATE_CGROUPS", base.cgroups),
    paths: {
      ...base.paths,
      ...optional("bwrap", env.SANDGATE_BWRAP),
      ...optional("python", env.SANDGATE_PYTHON),
      ...optional("node", env.SANDGATE_NODE),
      ...optional("bash", env.SANDGATE_BASH),
    },
    server: {
      ...server,
      host: str("SANDGATE_HOST", server.host),
      port: num("SANDGATE_PORT", server.port),
      ...(apiKey ? { apiKey } : {}),
      apiKeys: parseApiKeysEnv(env) ?? server.apiKeys,
      cors: { enabled: cors ?? server.cors.enabled, origins: parseListEnv(env, "SANDGATE_CORS_ORIGINS") ?? server.cors.origins },
      allowedHosts: parseListEnv(env, "SANDGATE_ALLOWED_HOSTS") ?? server.allowedHosts,
      allowedOrigins: parseListEnv(env, "SANDGATE_ALLOWED_ORIGINS") ?? server.allowedOrigins,
      maxBodyBytes: num("SANDGATE_MAX_BODY_BYTES", server.maxBodyBytes),
      bodyTimeoutS: num("SANDGATE_BODY_TIMEOUT", server.bodyTimeoutS),
      maxConcurrentPerClient: num("SANDGATE_MAX_CONCURRENT", server.maxConcurrentPerClient),
      mcpUnusedSessionS: num("SANDGATE_MCP_UNUSED_TTL", server.mcpUnusedSessionS),
      maxMcpSessions: num("SANDGATE_MAX_MCP_SESSIONS", server.maxMcpSessions),
      maxMcpSessionsPerIdentity: num("SANDGATE_MAX_MCP_SESSIONS_PER_KEY", server.maxMcpSessionsPerIdentity),
    },
    codeMode: {
      ...base.codeMode,
      toolCallTimeoutS: num("SANDGATE_TOOL_TIMEOUT", base.codeMode.toolCallTimeoutS),
      maxToolCallsPerExecution: num("SANDGATE_MAX_TOOL_CALLS", base.codeMode.maxToolCallsPerExecution),
      outputTokenBudget: num("SANDGATE_OUTPUT_TOKENS", base.codeMode.outputTokenBudget),
      maxUpstreamMessageBytes: num("SANDGATE_UPSTREAM_MAX_MESSAGE_BYTES", base.codeMode.maxUpstreamMessageBytes),
      maxToolsPerServer: num("SANDGATE_MAX_TOOLS_PER_SERVER", base.codeMode.maxToolsPerServer),
      persistInferredSchemas: parseBooleanEnv(env, "SANDGATE_PERSIST_INFERRED_SCHEMAS") ?? base.codeMode.persistInferredSchemas,
    },
  };
}

export interface LoadConfigOptions {
  /** A sandgate.json to read; else SANDGATE_CONFIG names one, else ./sandgate.json when it exists. */
  configPath?: string;
  /** The directory whose sandgate.json applies when no file is named; the working directory by default. */
  cwd?: string;
}

/**
 * The effective configuration: defaults, then the config file, then the environment.
 * Errors name the offending key and where it came from.
 */
export function loadConfig(env: Env = process.env, options: LoadConfigOptions = {}): SandgateConfig {
  const path = locateConfigFile({ ...options, env });
  const base = path === undefined ? defaultConfig() : readConfigFile(path, defaultConfig());
  return validateConfig(applyEnv(base, env), path === undefined ? "environment" : `environment over ${path}`);
}
