// Killing a bubblewrap launch whole: bubblewrap in a process group of its own (spawned with
// `detached`), and the group killed while bubblewrap is still ours.

import type { ChildProcess } from "node:child_process";

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
