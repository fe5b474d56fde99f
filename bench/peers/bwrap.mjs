// The floor of the side-by-side benchmark: bare `bwrap` + `python3 -c` with sandgate's own mounts and
// namespaces (no launcher, cgroup, seccomp or runner), spawned per run.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { buildSandboxArgv } from "../../dist/sandbox/bwrap-args.js";
import { PYTHON, expectTwo, lastJson, memoryAttempt, pythonProbe, run } from "./common.mjs";

export async function startBwrap(runtime, scratchDir) {
  const workspaceDir = join(scratchDir, "bare-ws");
  mkdirSync(workspaceDir, { recursive: true });
  const argv = (code) => {
    const full = buildSandboxArgv({
      bwrapPath: runtime.bwrapPath,
      mounts: { workspaceDir, workspaceBytes: 0, runnersDir: runtime.runnersDir, etcDir: runtime.etcDir, readOnlyPaths: runtime.readOnlyPaths, volumes: [] },
      env: { PATH: "/usr/bin:/bin", HOME: "/workspace", LANG: "C.UTF-8" },
      command: [PYTHON, "-c", code],
      rlimits: { fileSizeBytes: 64 << 20, openFiles: 1024 },
    });
    return argv0(full, runtime.bwrapPath);
  };
  const version = (await run([runtime.bwrapPath, "--version"])).trim();
  const peer = {
    name: "bare `bwrap` + `python3 -c` (floor)",
    version,
    limits: "namespaces and mounts only: no cgroup, no seccomp, no rlimits but file size and open files",
    cold: async () => expectTwo(await run(argv("print(1+1)")), "bwrap"),
    probe: async (ctx) => ({ ...lastJson(await run(argv(pythonProbe(ctx))), "bwrap probe"), memory: await memoryAttempt((code) => run(argv(code))) }),
  };
  return { peers: [peer], close: async () => {} };
}

/** bwrap directly: sandgate's launcher (rlimits, cgroup, seccomp) stripped from the front. */
const argv0 = (argv, bwrapPath) => argv.slice(argv.indexOf(bwrapPath));
