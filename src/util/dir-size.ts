// Measures a directory tree's size in bytes without following symlinks, stopping early once
// a limit is passed (the workspace check after each session call must stay cheap).

import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

export function directorySize(root: string, stopAbove = Number.POSITIVE_INFINITY): number {
  let total = 0;
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        stack.push(path);
        continue;
      }
      try {
        total += lstatSync(path).blocks * 512;
      } catch {
        // removed while we looked
      }
      if (total > stopAbove) return total;
    }
  }
  return total;
}
