// Getting a sandbox's processes into its cgroup: bubblewrap and its namespace init are moved
// while they set up, and before any code runs the whole process tree is checked to be inside.

import { readdirSync, readFileSync } from "node:fs";
import { SandgateError } from "../errors/index.js";
import type { SandboxCgroup } from "./cgroups.js";

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

/**
 * Moves bubblewrap (`outer`) and its namespace init into the cgroup as soon as the init exists,
 * so the kernel's wait for the move overlaps with mount setup and interpreter start-up; the
 * runner that init forks afterwards inherits the cgroup.
 */
export async function joinEarly(cgroup: SandboxCgroup, outer: number, gone: () => boolean): Promise<void> {
  let init: number | undefined;
  const deadline = Date.now() + 5000;
  while (init === undefined && !gone() && Date.now() < deadline) {
    init = childrenOf(outer)[0];
    if (init === undefined) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await cgroup.adopt(init === undefined ? [outer] : [outer, init]);
  // Anything init forked before its own move stayed behind; from now on forks inherit the
  // cgroup, so one sweep right away catches every straggler while the kernel's move is cheap.
  const stragglers = cgroup.missing(processTree(outer));
  if (stragglers.length > 0) await cgroup.adopt(stragglers);
}

/** Every process of the sandbox is inside its cgroup, or the sandbox must not run code. */
export async function ensureInside(cgroup: SandboxCgroup, outer: number, what: string): Promise<void> {
  for (let round = 0; round < 3; round++) {
    const missing = cgroup.missing(processTree(outer));
    if (missing.length === 0) return;
    await cgroup.adopt(missing);
  }
  throw new SandgateError("SANDBOX_FAILED", `the ${what} sandbox could not be moved into its cgroup, so its limits would not hold`);
}
