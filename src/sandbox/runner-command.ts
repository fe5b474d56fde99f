// How a runner is started inside bubblewrap: its command line (declared by its spec in
// src/languages/) and the environment every sandbox gets (nothing of the host's reaches it).

import { RUNNER_SPECS, type RunnerKind } from "../languages/index.js";
import type { ResolvedLimits } from "./limits.js";
import type { SandboxRuntime } from "./runtime.js";

/** The argv of the `kind` runner in a sandbox with these limits. */
export function runnerCommand(runtime: SandboxRuntime, kind: RunnerKind, limits: ResolvedLimits): string[] {
  const spec = RUNNER_SPECS[kind];
  return spec.command({ interpreter: runtime.interpreters[spec.interpreter], entry: runtime.runnerEntries[kind], memoryMb: limits.memoryMb });
}

export const SANDBOX_ENV = {
  // sandgate-tool and the pip/npm shims live in /sandgate/runners/bin; then the admin's package
  // sets (src/sandbox/package-sets.ts), whose directories are simply absent when none is synced.
  PATH: "/sandgate/runners/bin:/sandgate/packages/python/bin:/sandgate/packages/node/node_modules/.bin:/usr/local/bin:/usr/bin:/bin",
  // The shadow `pip` module (python -m pip) first, then the Python set for any python3 started by user code.
  PYTHONPATH: "/sandgate/runners/pyshim:/sandgate/packages/python/site-packages",
  NODE_PATH: "/sandgate/packages/node/node_modules",
  HOME: "/workspace",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  TMPDIR: "/tmp",
  // Caches and settings tools write under HOME (matplotlib's font cache and config, pip's, fontconfig's)
  // go to the sandbox's own /tmp instead of the user's files in /workspace.
  XDG_CACHE_HOME: "/tmp/.cache",
  XDG_CONFIG_HOME: "/tmp/.config",
  MPLCONFIGDIR: "/tmp/.config/matplotlib",
  USER: "sandbox",
  PYTHONUNBUFFERED: "1",
  PYTHONDONTWRITEBYTECODE: "1",
  // No network: an npm or pip that gets past the shims (/usr/bin/npm, python3 -I -m pip) fails at
  // once (ENOTCACHED; no matching distribution) instead of retrying the registry or the index.
  npm_config_offline: "true",
  PIP_NO_INDEX: "1",
} as const;
