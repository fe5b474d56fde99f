// Finding and killing what a stdio server left behind: the SDK kills only the direct child,
// so a server started through a wrapper (npx, sh, uvx) could leave its real process running.

import { readdirSync, readFileSync } from "node:fs";

/** A process identified by pid and start time, so a reused pid is never killed by mistake. */
export interface ProcessRef {
  pid: number;
  startTime: string;
}

function readStat(pid: number): { ppid: number; startTime: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(fields[1]), startTime: fields[19] ?? "" };
  } catch {
    return undefined;
  }
}

/** All live descendants of `root` (Linux /proc; empty elsewhere). */
export function descendantsOf(root: number): ProcessRef[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const children = new Map<number, ProcessRef[]>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const stat = readStat(pid);
    if (!stat) continue;
    const list = children.get(stat.ppid) ?? [];
    list.push({ pid, startTime: stat.startTime });
    children.set(stat.ppid, list);
  }
  const out: ProcessRef[] = [];
  const stack = [root];
  while (stack.length > 0) {
    for (const child of children.get(stack.pop()!) ?? []) {
      out.push(child);
      stack.push(child.pid);
    }
  }
  return out;
}

/** SIGKILL each process that is still the one recorded. */
export function killProcesses(refs: ProcessRef[]): number {
  let killed = 0;
  for (const ref of refs) {
    if (readStat(ref.pid)?.startTime !== ref.startTime) continue;
    try {
      process.kill(ref.pid, "SIGKILL");
      killed++;
    } catch {
      // exited meanwhile
    }
  }
  return killed;
}
