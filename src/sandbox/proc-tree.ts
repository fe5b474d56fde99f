// Reading a process tree from /proc: the processes a sandbox consists of, found from the pid
// of its bubblewrap process, so that every one of them can be checked into its cgroup.

import { readdirSync, readFileSync } from "node:fs";

/** Direct children of `pid`, over all its threads. */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").split(" ")) {
        if (child.trim()) out.push(Number(child));
      }
    } catch {
      // thread or process ended while we looked
    }
  }
  return out;
}

/** `pid` and everything below it. */
export function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...childrenOf(out[i]!));
  return out;
}
