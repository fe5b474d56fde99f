// The generated tree on disk: atomic file writes (temp file + rename in the same directory) and cleanup.
// Sandboxes bind-mount the directory read-only, so only its contents change; the directory itself never does.

import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync, rmdirSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { randomBytes } from "node:crypto";

/** Top-level entries of the tree directory that this writer owns and clears at start-up. */
const OWNED_ENTRIES = ["servers", "python", "manifest.json"];

export class TreeWriter {
  /** Current content of every written file, by path relative to the root. */
  private readonly written = new Map<string, string>();

  constructor(private readonly root: string) {
    mkdirSync(root, { recursive: true });
    // Wrappers of servers from an earlier run must not outlive it.
    for (const entry of OWNED_ENTRIES) rmSync(join(root, entry), { recursive: true, force: true });
  }

  /** Writes `content` at `path` (relative) unless it is already there; readers never see a partial file. */
  write(path: string, content: string): void {
    if (this.written.get(path) === content) return;
    const target = join(this.root, path);
    const dir = dirname(target);
    this.ensureDir(dir);
    const temp = join(dir, `.${randomBytes(6).toString("hex")}.tmp`);
    try {
      writeFileSync(temp, content, { mode: 0o644 });
      chmodSync(temp, 0o644);
      renameSync(temp, target);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    this.written.set(path, content);
  }

  /** Deletes `path` and any directories it leaves empty below the root. */
  remove(path: string): void {
    this.written.delete(path);
    try {
      unlinkSync(join(this.root, path));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    let dir = dirname(path);
    while (dir !== "." && dir !== "" && dir !== "/") {
      try {
        if (readdirSync(join(this.root, dir)).length > 0) break;
        rmdirSync(join(this.root, dir));
      } catch {
        break;
      }
      dir = dirname(dir);
    }
  }

  private ensureDir(dir: string): void {
    mkdirSync(dir, { recursive: true, mode: 0o755 });
  }
}
