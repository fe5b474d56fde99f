// The generated tree on disk: atomic file writes (temp file + rename in the same directory) and cleanup.
// Sandboxes bind-mount the directory read-only, so only its contents change; the directory itself never does.

import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync, rmdirSync, unlinkSync, writeFileSync } from "node:fs";
import { chmod, mkdir, readdir, rename, rm, rmdir, unlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { randomBytes } from "node:crypto";

/** Top-level entries of the tree directory that this writer owns and clears at start-up. */
const OWNED_ENTRIES = ["servers", "python", "manifest.json"];
/**
 * Batches up to this many files are written at once. Bigger ones go through the thread pool:
 * replacing 1,000 tools synchronously held the event loop for 0.4-1 s on a busy disk.
 */
const SYNC_FILES = 32;
/** Files written or removed in parallel by an asynchronous batch. */
const PARALLEL = 8;

/** One change to the tree: files to write (new content by path), then paths to delete. */
export interface TreeBatch {
  writes: [string, string][];
  removals: string[];
}

export class TreeWriter {
  /** Content of every file written or queued, by path relative to the root. */
  private readonly written = new Map<string, string>();
  /** Batches still being written, in order; a batch starts after the one before it. */
  private queue: Promise<void> = Promise.resolve();
  private pending = 0;
  private failure: Error | undefined;

  constructor(private readonly root: string) {
    mkdirSync(root, { recursive: true });
    // Wrappers of servers from an earlier run must not outlive it.
    for (const entry of OWNED_ENTRIES) rmSync(join(root, entry), { recursive: true, force: true });
  }

  /**
   * Writes `files` (those not already there), then deletes `stale` and the directories it leaves
   * empty; readers never see a partial file. A small change is done before it returns; a big one,
   * or any while another is still running, is queued in order (settled() waits for it); so is any
   * change when `background`, for one that nothing waits to read.
   */
  update(files: Iterable<[string, string]>, stale: Iterable<string> = [], background = false): void {
    const batch: TreeBatch = { writes: [], removals: [] };
    for (const [path, content] of files) {
      if (this.written.get(path) === content) continue;
      this.written.set(path, content);
      batch.writes.push([path, content]);
    }
    for (const path of stale) {
      this.written.delete(path);
      batch.removals.push(path);
    }
    if (batch.writes.length + batch.removals.length === 0) return;
    if (!background && this.pending === 0 && batch.writes.length + batch.removals.length <= SYNC_FILES) {
      this.applySync(batch);
      return;
    }
    this.pending++;
    this.queue = this.queue
      .then(() => this.apply(batch))
      .catch((error: unknown) => {
        this.failure ??= error instanceof Error ? error : new Error(String(error));
        for (const [path] of batch.writes) this.written.delete(path);
      })
      .finally(() => this.pending--);
  }

  /** Resolves when every queued change is on disk; rejects with the first write that failed since the last call. */
  async settled(): Promise<void> {
    await this.queue;
    const failure = this.failure;
    this.failure = undefined;
    if (failure !== undefined) throw failure;
  }

  private applySync(batch: TreeBatch): void {
    for (const [path, content] of batch.writes) {
      const target = join(this.root, path);
      const dir = dirname(target);
      mkdirSync(dir, { recursive: true, mode: 0o755 });
      const temp = join(dir, `.${randomBytes(6).toString("hex")}.tmp`);
      try {
        writeFileSync(temp, content, { mode: 0o644 });
        chmodSync(temp, 0o644);
        renameSync(temp, target);
      } catch (error) {
        // Like a failed background batch: none of what was not written may count as written.
        for (const [unwritten] of batch.writes) this.written.delete(unwritten);
        rmSync(temp, { force: true });
        throw error;
      }
    }
    for (const path of batch.removals) {
      try {
        unlinkSync(join(this.root, path));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
    for (const dir of emptiedDirs(batch.removals)) {
      try {
        if (readdirSync(join(this.root, dir)).length === 0) rmdirSync(join(this.root, dir));
      } catch {
        // Gone already.
      }
    }
  }

  private async apply(batch: TreeBatch): Promise<void> {
    for (const dir of new Set(batch.writes.map(([path]) => dirname(join(this.root, path))))) await mkdir(dir, { recursive: true, mode: 0o755 });
    await inParallel(batch.writes, async ([path, content]) => {
      const target = join(this.root, path);
      const temp = join(dirname(target), `.${randomBytes(6).toString("hex")}.tmp`);
      try {
        await writeFile(temp, content, { mode: 0o644 });
        await chmod(temp, 0o644);
        await rename(temp, target);
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
    });
    await inParallel(batch.removals, async (path) => {
      try {
        await unlink(join(this.root, path));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    });
    for (const dir of emptiedDirs(batch.removals)) {
      try {
        if ((await readdir(join(this.root, dir))).length === 0) await rmdir(join(this.root, dir));
      } catch {
        // Gone already.
      }
    }
  }
}

/**
 * Directories below the root that held `removed`, deepest first. Each is looked at once, after all
 * its files are gone: looking after every file made replacing a big server's files quadratic.
 */
function emptiedDirs(removed: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const path of removed) {
    for (let dir = dirname(path); dir !== "." && dir !== "" && dir !== "/"; dir = dirname(dir)) dirs.add(dir);
  }
  return [...dirs].sort((a, b) => b.length - a.length);
}

async function inParallel<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, worker));
}
