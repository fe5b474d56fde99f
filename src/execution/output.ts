// Output shaping: what the caller sees of a run's stdout/stderr (head and tail within the
// display budget) and where the full text is kept when it did not fit.

import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export interface ShapedStream {
  text: string;
  truncated: boolean;
  /** Host path of the full output, when it was larger than shown. */
  fullPath?: string;
  totalBytes: number;
}

/** Keeps the first three quarters and the last quarter of the budget, cut on UTF-8 boundaries. */
export function shapeOutput(data: Buffer, displayBytes: number, save: () => string): ShapedStream {
  if (data.length <= displayBytes) return { text: data.toString("utf8"), truncated: false, totalBytes: data.length };
  const fullPath = save();
  const headBytes = Math.floor(displayBytes * 0.75);
  const tailBytes = displayBytes - headBytes;
  const head = data.subarray(0, headBytes).toString("utf8").replace(/\uFFFD+$/, "");
  const tail = data.subarray(data.length - tailBytes).toString("utf8").replace(/^\uFFFD+/, "");
  const omitted = data.length - headBytes - tailBytes;
  const note = `\n… [${omitted} bytes omitted; full output (${data.length} bytes) saved to ${fullPath}] …\n`;
  return { text: head + note + tail, truncated: true, fullPath, totalBytes: data.length };
}

/**
 * Writes a full output file and returns the path the caller should be told about. `own` hands
 * what was created to whoever must be able to delete it (the sandbox user, in a workspace).
 */
export function saveOutput(dir: string, name: string, data: Buffer, shownDir: string, own?: (path: string) => void): string {
  const created = mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(file, data);
  if (own) {
    if (created) for (let d = dir; d.startsWith(created); d = dirname(d)) own(d);
    own(file);
  }
  return join(shownDir, name);
}

/**
 * Deletes saved outputs of stateless calls older than `maxAgeMs` (sessions keep theirs in their
 * own workspace, which goes when the session does).
 */
export function pruneOutputs(dir: string, maxAgeMs: number, now = Date.now()): number {
  let removed = 0;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry);
    try {
      if (now - statSync(path).mtimeMs > maxAgeMs) {
        rmSync(path, { recursive: true, force: true });
        removed++;
      }
    } catch {
      // removed by someone else meanwhile
    }
  }
  return removed;
}
