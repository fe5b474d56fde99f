// Starting and killing a bubblewrap launch (sandboxes and file helpers alike): spawned as the
// sandbox user with a bare environment in a process group of its own, and that group killed whole.

import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import type { HostUser } from "./runtime.js";

export interface BwrapSpawnOptions {
  /** bubblewrap's argv (or a launcher's that execs it); argv[0] is the program. */
  argv: string[];
  /** What the child gets on fds 0, 1, 2, ...; unlisted fds below `seccomp.fd` are closed. */
  stdio: ReadonlyArray<"pipe" | "ignore">;
  /** The seccomp program, opened here and handed over at `fd` (the fd argv names). */
  seccomp?: { file: string; fd: number } | undefined;
  /** As root, bubblewrap runs as this unprivileged user (supplementary groups dropped); undefined when argv drops to it itself. */
  hostUser: HostUser | undefined;
  /** Open host fds the child gets at these fd numbers (above the seccomp fd); the caller's own copies stay its to close. */
  inherit?: ReadonlyArray<{ fd: number; from: number }>;
}

/** Spawns a bubblewrap launch; kill it with killGroup. */
export function spawnBwrap(options: BwrapSpawnOptions): ChildProcess {
  const stdio: Array<"pipe" | "ignore" | number> = [...options.stdio];
  const seccompFd = options.seccomp ? openSync(options.seccomp.file, "r") : undefined;
  try {
    if (options.seccomp && seccompFd !== undefined) {
      while (stdio.length <= options.seccomp.fd) stdio.push("ignore");
      stdio[options.seccomp.fd] = seccompFd;
    }
    for (const { fd, from } of options.inherit ?? []) {
      while (stdio.length <= fd) stdio.push("ignore");
      stdio[fd] = from;
    }
    const [program, ...args] = options.argv;
    return spawn(program!, args, {
      stdio,
      env: { PATH: "/usr/bin:/bin" },
      // bubblewrap passes its working directory on as PWD, which pid 1 of the sandbox shows: not the host's.
      cwd: "/",
      // A process group of its own, killed whole by killGroup.
      detached: true,
      ...(options.hostUser ? { uid: options.hostUser.uid, gid: options.hostUser.gid } : {}),
    });
  } finally {
    // The child has its own copy now.
    if (seccompFd !== undefined) closeSync(seccompFd);
  }
}

/**
 * Kills bubblewrap and what it forked so far. bubblewrap's child arms its parent-death signal
 * only after it has waited for the parent to map its user namespace, so a parent killed before
 * that leaves the child waiting forever (seen: 4 helpers in 60 killed while starting). Until the
 * sandbox's own session starts, the child is in bubblewrap's process group, so the group goes.
 */
export function killGroup(child: ChildProcess): void {
  // Only while bubblewrap is unreaped: its pid, and so the group's id, cannot have been reused.
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // the group is gone already
    }
  }
  child.kill("SIGKILL");
}
