// Deletes ended sessions' workspaces without blocking anyone: moved aside into a trash directory at
// once, emptied in the background by the file helper as the sandbox user, then removed; retried.

import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { readdir, readFile, rename, rmdir, stat, unlink } from "node:fs/promises";
import { basename, join } from "node:path";
import { randomBytes } from "node:crypto";
import type { SandboxRuntime, WorkspaceFilesystems } from "../sandbox/index.js";
import { silentLogger, type Logger } from "../util/logger.js";
import { emptyWorkspace } from "./workspace-files.js";

const RETRY_MS = 60_000;
/** A workspace without an owner mark is left alone this long: its process may be writing the mark. */
const UNCLAIMED_GRACE_MS = 60_000;

/** Whether process `pid` exists (EPERM: it does, as another user). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class WorkspaceReaper {
  /** Under the workspaces directory (root's, 0711); no session id can start with a dot. */
  readonly trashDir: string;
  /** Root's: which process uses each workspace (`<name>` holds its pid), so a restart finds the orphans. */
  private readonly ownersDir: string;
  private readonly inFlight = new Map<string, Promise<boolean>>();
  private readonly retry: NodeJS.Timeout;
  private readonly stopping = new AbortController();
  /** The start-up sweep of orphaned workspaces (tests wait for it). */
  readonly orphansSwept: Promise<void>;

  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly log: Logger = silentLogger,
    /** Unmounts the filesystems of orphaned workspaces before they are deleted. */
    private readonly filesystems?: WorkspaceFilesystems,
  ) {
    this.trashDir = join(runtime.workspacesDir, ".trash");
    mkdirSync(this.trashDir, { recursive: true, mode: 0o711 });
    chmodSync(this.trashDir, 0o711);
    this.ownersDir = join(runtime.workspacesDir, ".owners");
    mkdirSync(this.ownersDir, { recursive: true, mode: 0o700 });
    chmodSync(this.ownersDir, 0o700);
    // Workspaces of a sandgate process that died (crash, kill -9) go too.
    this.orphansSwept = this.sweepOrphans();
    // What an earlier run left (a failed or interrupted delete) is tried again now, then every minute.
    void this.sweep();
    this.retry = setInterval(() => void this.sweep(), RETRY_MS);
    this.retry.unref();
  }

  /** Marks a new workspace as this process's. */
  claim(workspaceDir: string): void {
    writeFileSync(join(this.ownersDir, basename(workspaceDir)), String(process.pid), { mode: 0o600 });
  }

  /**
   * Takes a workspace whose sandboxes are gone out of use at once (a rename) and deletes it in
   * the background. Never rejects; false when even the rename failed (the directory stays).
   */

  async remove(workspaceDir: string): Promise<boolean> {
    const trashed = join(this.trashDir, `${basename(workspaceDir)}-${randomBytes(4).toString("hex")}`);
    try {
      // Both parents are root's: the sandbox can replace neither name, so the rename is safe by path.
      await rename(workspaceDir, trashed);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
      this.log.warn({ err: error }, "could not move a workspace to the trash");
      return false;
    }
    // Counted as under way from the rename on (settled() waits for it), before anything else awaits.
    void this.purge(trashed);
    await unlink(join(this.ownersDir, basename(workspaceDir))).catch(() => undefined);
    return true;
  }

  /**
   * A workspace whose own filesystem was just unmounted: the directory under it was never the
   * sandbox's (it was mounted over before anything started), so it is empty and goes at once.
   */
  async removeUnmounted(workspaceDir: string): Promise<boolean> {
    try {
      await rmdir(workspaceDir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
      return this.remove(workspaceDir);
    }
    await unlink(join(this.ownersDir, basename(workspaceDir))).catch(() => undefined);
    return true;
  }

  /** Resolves when no deletion is under way (tests). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()]);
  }

  /** Retries everything in the trash. */
  async sweep(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.trashDir);
    } catch {
      return;
    }
    for (const name of names) if (!this.stopping.signal.aborted) await this.purge(join(this.trashDir, name));
  }

  /**
   * Workspaces whose process is gone: their filesystems unmounted and images deleted, then moved
   * to the trash and deleted. Resolves when the unmounting is done (the deletion goes on).
   */
  async sweepOrphans(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.runtime.workspacesDir);
    } catch {
      return;
    }
    const mounted = (await this.filesystems?.mountedWorkspaces()) ?? new Set<string>();
    for (const name of names) {
      if (name.startsWith(".") || this.stopping.signal.aborted) continue;
      const dir = join(this.runtime.workspacesDir, name);
      const owner = Number(await readFile(join(this.ownersDir, name), "utf8").catch(() => ""));
      if (owner > 0 && processAlive(owner)) continue;
      // Sessions are claimed before they are mounted, so a mount without a live owner is a leftover.
      if (mounted.has(name)) await this.filesystems?.release(dir);
      else if (!(owner > 0)) {
        const made = await stat(dir).then((st) => st.ctimeMs, () => undefined);
        if (made === undefined || Date.now() - made < UNCLAIMED_GRACE_MS) continue;
      }
      await this.remove(dir);
    }
    for (const image of (await this.filesystems?.strayImages()) ?? []) await this.filesystems?.deleteImage(image);
    await this.filesystems?.sweepProbes(processAlive);
  }

  /** Stops retrying and kills deletions under way; what is left in the trash goes at the next start. */
  async close(): Promise<void> {
    clearInterval(this.retry);
    this.stopping.abort();
    await this.settled();
  }

  private purge(dir: string): Promise<boolean> {
    const current = this.inFlight.get(dir);
    if (current) return current;
    if (this.stopping.signal.aborted) return Promise.resolve(false);
    const done = this.empty(dir).finally(() => this.inFlight.delete(dir));
    this.inFlight.set(dir, done);
    return done;
  }

  private async empty(dir: string): Promise<boolean> {
    try {
      await emptyWorkspace({ runtime: this.runtime, dir }, this.stopping.signal);
      // The helper emptied it; rmdir never follows a link and the name is in root's directory.
      await rmdir(dir);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
      if (!this.stopping.signal.aborted) this.log.warn({ err: error }, "could not delete a workspace; it stays in the trash and is tried again");
      return false;
    }
  }
}
