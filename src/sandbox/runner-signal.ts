// Signalling a sandbox's runner from the host: its host pid is found from bubblewrap's own pid
// (outer bubblewrap -> the namespace's init -> the runner) and the pid the runner reported.

import { readFileSync } from "node:fs";

/** The children of a process (forked by its main thread), or none when it is gone. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "latin1").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A process's pids from the host's pid namespace inward (its NSpid line), or undefined when gone. */
function nsPids(pid: number): number[] | undefined {
  try {
    const line = /^NSpid:\s*(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, "latin1"));
    return line?.[1]?.trim().split(/\s+/).map(Number);
  } catch {
    return undefined;
  }
}

/**
 * The host pid of the runner: a grandchild of `bwrapPid` (outer bubblewrap, which the caller has
 * not reaped, so it is still this sandbox's) that is `runnerPid` in the sandbox's own pid
 * namespace, one level below the host's. Processes of user code reparented to the namespace's init
 * have other pids there, and nested namespaces have more levels, so neither can be taken for it.
 */
function runnerHostPid(bwrapPid: number, runnerPid: number): number | undefined {
  for (const init of childrenOf(bwrapPid)) {
    for (const pid of childrenOf(init)) {
      const pids = nsPids(pid);
      if (pids?.length === 2 && pids[0] === pid && pids[1] === runnerPid) return pid;
    }
  }
  return undefined;
}

/** Sends `signal` to the runner; false when it cannot be found (the caller then kills the sandbox). */
export function signalRunner(bwrapPid: number, runnerPid: number, signal: NodeJS.Signals): boolean {
  const pid = runnerHostPid(bwrapPid, runnerPid);
  if (pid === undefined) return false;
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}
