// How each runner is started inside bubblewrap: its command line and the environment every
// sandbox gets (nothing of the host's environment reaches it).

import type { ResolvedLimits } from "./limits.js";
import type { RunnerKind, SandboxRuntime } from "./runtime.js";

export const RUNNER_COMMAND: Record<RunnerKind, (runtime: SandboxRuntime, limits: ResolvedLimits) => string[]> = {
  python: (rt) => [rt.interpreters.python, "-I", "-S", "-B", rt.pythonEntry],
  bash: (rt) => [rt.interpreters.bash, "--noprofile", "--norc", "-c", BASH_RUNNER_LOOP, "main.sh"],
  javascript: (rt, limits) => [
    rt.interpreters.node,
    // V8 sizes its heap from the host's RAM; tell it the sandbox's real budget so it collects in time.
    `--max-old-space-size=${Math.max(16, Math.floor(limits.memoryMb * 0.75))}`,
    "/sandgate/runners/node_runner.cjs",
  ],
};

export const SANDBOX_ENV = {
  // sandgate-tool lives in /sandgate/runners/bin.
  PATH: "/sandgate/runners/bin:/usr/bin:/bin",
  HOME: "/workspace",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  TMPDIR: "/tmp",
  USER: "sandbox",
  PYTHONUNBUFFERED: "1",
  PYTHONDONTWRITEBYTECODE: "1",
} as const;

/**
 * The Bash runner's main loop (functions in runners/bash_lib.sh). It runs as `bash -c` with
 * $0 = main.sh and the eval on line 1, so messages and $LINENO match the user's own lines.
 */
const BASH_RUNNER_LOOP =
  'builtin . /sandgate/runners/bash_lib.sh; while __sg_next; do __sg_busy=1; eval "$__sg_code" </dev/null 3<&- 4>&-; __sg_done "$?"; done; __sg_busy=0';
