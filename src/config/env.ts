// The only module that reads process.env: every variable sandgate honours, with its default.
// A malformed value fails loudly at start-up instead of being silently ignored.

import { homedir } from "node:os";
import { join } from "node:path";
import { SandgateError } from "../errors/index.js";
import { configSchema, type SandgateConfig } from "./schema.js";

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

/** Builds the effective configuration from defaults and the environment. */
export function loadConfig(env: Env = process.env): SandgateConfig {
  const candidate: SandgateConfig = {
    // Root's home is closed to the unprivileged user sandboxes run as, so root keeps state in /var/lib.
    sandboxDir: env.SANDBOX_DIR?.trim() || (process.getuid?.() === 0 ? "/var/lib/sandgate" : join(homedir(), ".sandgate")),
    limits: {
      maxExecutionTimeS: parseNumberEnv(env, "MAX_EXECUTION_TIME", 30),
      maxMemoryMb: parseNumberEnv(env, "MAX_MEMORY_MB", 256),
      maxOutputSize: parseNumberEnv(env, "MAX_OUTPUT_SIZE", 8192),
      outputCapBytes: parseNumberEnv(env, "SANDGATE_OUTPUT_CAP", 10 * 1024 * 1024),
      maxCodeBytes: parseNumberEnv(env, "SANDGATE_MAX_CODE_BYTES", 1024 * 1024),
      maxProcesses: parseNumberEnv(env, "SANDGATE_MAX_PROCESSES", 256),
      maxCpus: parseNumberEnv(env, "SANDGATE_MAX_CPUS", 2),
      maxFileSizeMb: parseNumberEnv(env, "SANDGATE_MAX_FILE_MB", 64),
      maxWorkspaceMb: parseNumberEnv(env, "SANDGATE_MAX_WORKSPACE_MB", 256),
      maxOpenFiles: parseNumberEnv(env, "SANDGATE_MAX_OPEN_FILES", 1024),
    },
    flavors: {
      small: { cpus: 0.5, memoryMb: 128, processes: 32 },
      medium: { cpus: 1, memoryMb: 256, processes: 64 },
      large: { cpus: 2, memoryMb: 1024, processes: 256 },
    },
    defaultFlavor: (env.SANDGATE_DEFAULT_FLAVOR?.trim() || "medium") as SandgateConfig["defaultFlavor"],
    sessions: {
      max: parseNumberEnv(env, "SANDGATE_MAX_SESSIONS", 32),
      idleTtlS: parseNumberEnv(env, "SANDGATE_SESSION_TTL", 900),
    },
    pool: parsePoolEnv(env, { python: 2, javascript: 1, bash: 1 }),
    sandboxUser: {
      uid: parseNumberEnv(env, "SANDGATE_SANDBOX_UID", 65534),
      gid: parseNumberEnv(env, "SANDGATE_SANDBOX_GID", 65534),
    },
    logLevel: (env.SANDGATE_LOG_LEVEL?.trim() || "warn") as SandgateConfig["logLevel"],
    outputTtlS: parseNumberEnv(env, "SANDGATE_OUTPUT_TTL", 24 * 3600),
    cgroups: (env.SANDGATE_CGROUPS?.trim() || "auto") as SandgateConfig["cgroups"],
    paths: {
      ...optional("bwrap", env.SANDGATE_BWRAP),
      ...optional("python", env.SANDGATE_PYTHON),
      ...optional("node", env.SANDGATE_NODE),
      ...optional("bash", env.SANDGATE_BASH),
    },
  };
  return validateConfig(candidate, "environment");
}

/** Checks a configuration object against the schema, naming the offending key. */
export function validateConfig(candidate: unknown, source: string): SandgateConfig {
  const parsed = configSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue?.path.join(".") ?? "";
    throw new SandgateError("CONFIG_INVALID", `invalid configuration (${source}): ${key ? `${key}: ` : ""}${issue?.message ?? "invalid"}`, {
      data: { key, source },
    });
  }
  return parsed.data;
}
