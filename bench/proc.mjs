// /proc helpers shared by the benchmarks.

import { readdirSync, readFileSync } from "node:fs";

/** Resident memory of `pid` in KiB (VmRSS); 0 when the process is gone. */
export function rssKb(pid) {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Processes below `root` on the host, found through the ppid field of /proc/<pid>/stat. */
export function descendants(root) {
  const kids = new Map();
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const st = readFileSync(`/proc/${e}/stat`, "utf8");
      const ppid = Number(st.slice(st.lastIndexOf(")") + 2).split(" ")[1]);
      kids.set(ppid, [...(kids.get(ppid) ?? []), Number(e)]);
    } catch {}
  }
  const out = [];
  const stack = [root];
  while (stack.length) for (const k of kids.get(stack.pop()) ?? []) out.push(k), stack.push(k);
  return out;
}
