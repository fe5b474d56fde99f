// The effective security policy: limits, flavors and which protections are active on this
// host. Served as the MCP resource sandgate://security-policy and at GET /security/policy (governance.policy).

import { z } from "zod";
import { allApiKeys, defaultTimeoutS, LANGUAGES, type SandgateConfig } from "../../config/index.js";
import { effectiveFlavors, SECCOMP_DENIED_SYSCALLS } from "../../sandbox/index.js";
import { MAX_ENV_BYTES, MAX_ENV_VARS, reservedEnvNames, type Engine } from "../../execution/index.js";
import { defineOperation } from "../../operations/index.js";
import { describeCodePolicy } from "./code-policy.js";
import { describeToolPolicy } from "./tool-policy.js";

/** What the policy is read from: the config and the engine's view of this host. */
export interface PolicyHost {
  config: SandgateConfig;
  engine: Engine;
}

export const POLICY_URI = "sandgate://security-policy";

/** How the workspace limits are held: by a filesystem of their own (the kernel) or by checks after calls. */
function workspaceQuota(ctx: PolicyHost): Record<string, unknown> {
  const state = ctx.engine.sessions.filesystems.known;
  const { maxWorkspaceMb, maxWorkspaceInodes } = ctx.config.limits;
  const limits = { max_mb: maxWorkspaceMb, max_inodes: maxWorkspaceInodes };
  if (!state) return { ...limits, enforcement: "being probed" };
  return state.active === "filesystem"
    ? { ...limits, enforcement: "filesystem", note: "each session workspace is its own ext4 filesystem; writes past the limits fail with ENOSPC" }
    : { ...limits, enforcement: "directory", note: `checked after each call; file_write is refused while over, but one call can write past the limit (${state.reason ?? "?"})` };
}

/** Each flavor as a call gets it (capped by the limits), saying what the cap lowered. */
function flavorsAsRun(ctx: PolicyHost): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    effectiveFlavors(ctx.config).map((f) => [
      f.name,
      {
        cpus: f.cpus,
        memoryMb: f.memoryMb,
        processes: f.processes,
        ...(f.cappedFromMb === undefined ? {} : { note: `configured ${f.cappedFromMb} MB, capped by limits.maxMemoryMb` }),
      },
    ]),
  );
}

/** The code policy: the level, its table severity -> action, the overrides, and whether analysis is on at all. */
function codePolicy(ctx: PolicyHost): Record<string, unknown> {
  const { enabled, findingsShown } = ctx.config.security;
  const policy = describeCodePolicy(ctx.config.security);
  return {
    enabled,
    ...(enabled ? {} : { note: "governance is off (security.enabled false): code runs unanalysed and unrecorded; analyze_code still analyses" }),
    level: policy.level,
    table: policy.table,
    levels: policy.levels,
    categories: policy.categories,
    languages: policy.languages,
    findings_shown: findingsShown,
    actions: "the most restrictive action over all findings wins: block > approve > warn > allow",
  };
}

export function securityPolicy(ctx: PolicyHost): Record<string, unknown> {
  const { config, engine } = ctx;
  const runtime = engine.runtime;
  const { limits } = config;
  return {
    languages: [...LANGUAGES],
    limits: {
      max_execution_time_s: limits.maxExecutionTimeS,
      default_execution_time_s: defaultTimeoutS(limits),
      max_memory_mb: limits.maxMemoryMb,
      max_processes: limits.maxProcesses,
      max_cpus: limits.maxCpus,
      max_file_size_mb: limits.maxFileSizeMb,
      max_workspace_mb: limits.maxWorkspaceMb,
      max_upload_mb: limits.maxUploadMb,
      max_open_files: limits.maxOpenFiles,
      output_shown_bytes: limits.maxOutputSize,
      output_cap_bytes: limits.outputCapBytes,
      max_code_bytes: limits.maxCodeBytes,
      max_sandboxes: limits.maxSandboxes,
      max_sandboxes_per_client: ctx.engine.admissionState().maxPerOwner,
      max_committed_memory_mb: limits.maxCommittedMemoryMb,
      queue_wait_s: limits.queueWaitS,
    },
    env: {
      max_vars: MAX_ENV_VARS,
      max_bytes: MAX_ENV_BYTES,
      reserved: reservedEnvNames(),
      masked: "values of secret-looking names (KEY, TOKEN, SECRET, PASSWORD, AUTH, COOKIE...) and passwords or tokens inside values are shown as [masked:NAME] in results; only the literal value",
    },
    flavors: flavorsAsRun(ctx),
    default_flavor: config.defaultFlavor,
    sessions: { max: config.sessions.max, idle_ttl_s: config.sessions.idleTtlS, workspace: workspaceQuota(ctx) },
    jobs: { max: config.jobs.max, max_per_client: config.jobs.maxPerIdentity, keep_finished_s: config.jobs.keepFinishedS, default_timeout_s: limits.maxExecutionTimeS },
    isolation: {
      sandbox: "bubblewrap",
      namespaces: ["user", "pid", "network", "ipc", "uts", "mount", "cgroup"],
      network: "none: sandboxes have only a private loopback interface",
      filesystem:
        "read-only /usr (with /usr/local; /usr/local/etc and /usr/etc hidden) and the host image's public /etc entries (alternatives, linker cache, CA certificates, time zone, locale, fonts), synthetic passwd/group/hosts, a frozen root; writable /workspace (size-capped) and /tmp; host paths other than volumes are invisible",
      capabilities: "all dropped; nested user namespaces disabled",
      seccomp: runtime.seccompFile ? { active: true, denied_syscalls: [...SECCOMP_DENIED_SYSCALLS] } : { active: false },
      cgroups: {
        mode: runtime.cgroups.mode,
        controllers: runtime.cgroups.controllers,
        freezes_idle_sessions: runtime.cgroups.freezer === true,
        ...(runtime.cgroups.reason ? { note: runtime.cgroups.reason } : {}),
      },
      host_user: runtime.hostUser ? `uid ${runtime.hostUser.uid}` : `uid ${process.getuid?.() ?? "unknown"} (the user running sandgate)`,
      environment: "cleared; only PATH, HOME, LANG and interpreter settings are set, and the variables callers give (env)",
    },
    code_policy: codePolicy(ctx),
    volumes: config.volumes.map((v) => ({ name: v.name, path: `/mnt/${v.name}`, read_only: v.readOnly })),
    tool_policy: describeToolPolicy(config.toolPolicy, Object.keys(config.mcpServers)),
    approvals: {
      timeout_s: config.approvals.timeoutS,
      max_pending: config.approvals.maxPending,
      max_pending_per_client: config.approvals.maxPendingPerClient,
      how: "the calling MCP client is asked through elicitation when it supports it; an admin can always decide at GET /approvals and POST /approvals/{id}; no decision in time denies. Sandboxed code has no network and cannot answer either",
    },
    http: {
      api_key_required: allApiKeys(config.server).length > 0,
      cors: config.server.cors.enabled,
      max_body_bytes: config.server.maxBodyBytes,
      body_timeout_s: config.server.bodyTimeoutS,
      max_concurrent_per_client: config.server.maxConcurrentPerClient,
      max_sessions_per_client: Math.min(config.sessions.maxPerIdentity, config.sessions.max),
      identity: allApiKeys(config.server).length > 0 ? "the API key's name" : "the MCP session (MCP) or the peer address (REST)",
    },
  };
}

/** governance.policy (GET /security/policy): the effective policy, readable by every caller let in. */
export const readSecurityPolicy = defineOperation({
  id: "governance.policy",
  summary: "The effective security policy: limits, flavors, isolation active on this host, code policy, tool policy and approvals",
  scope: "any",
  effects: ["read"],
  idempotent: true,
  input: z.object({}),
  // Its sections, as securityPolicy writes them.
  output: z.object({}).catchall(z.unknown()),
  run: async (host: PolicyHost) => securityPolicy(host),
  surfaces: { mcp: null, rest: { method: "get", path: "/security/policy", tag: "status", description: null }, sandbox: null },
});
