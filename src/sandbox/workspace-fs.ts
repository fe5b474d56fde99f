// Per-session workspace filesystems: a sparse ext4 image per session, loop-mounted on the
// workspace directory, so the kernel bounds its bytes and inodes (ENOSPC inside the sandbox).

import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, chmodSync } from "node:fs";
import { chmod, mkdir, open, readdir, readFile, realpath, rmdir, statfs, unlink } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import type { HostUser } from "./runtime.js";

const run = promisify(execFile);

/** "auto": a filesystem per session where the host allows it (root, mkfs.ext4, loop devices); "directory": plain directories. */
export type WorkspaceFsMode = "auto" | "directory";

export interface WorkspaceFsOptions {
  mode: WorkspaceFsMode;
  /** The directory of session workspaces (root's); images live in its `.images`. */
  workspacesDir: string;
  /** Owner of each filesystem's root: the sandbox user. Undefined when not running as root. */
  hostUser: HostUser | undefined;
  bytes: number;
  inodes: number;
}

export interface WorkspaceFsState {
  /** "filesystem" once the probe passed, else "directory". */
  active: "filesystem" | "directory";
  /** Why plain directories are used (absent when the filesystem is active). */
  reason?: string;
}

/** mkfs.ext4, mount and umount live in /sbin or /usr/sbin, which a service's PATH may lack. */
const TOOL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const TOOL_TIMEOUT_MS = 30_000;
const RESERVED_INODES = 10;
const INODE_BYTES = 256;
/** mkfs.ext4 refuses images far below this. */
const MIN_IMAGE_BYTES = 1 << 20;

function tool(file: string, args: string[]): Promise<unknown> {
  return run(file, args, { env: { PATH: TOOL_PATH, LC_ALL: "C" }, timeout: TOOL_TIMEOUT_MS });
}

function message(error: unknown): string {
  const e = error as { stderr?: string; message?: string };
  return (e.stderr?.trim() || e.message || String(error)).split("\n")[0] ?? "unknown error";
}

/** Mount points in /proc/self/mountinfo (field 5, octal escapes undone). */
export async function mountPoints(): Promise<string[]> {
  const text = await readFile("/proc/self/mountinfo", "utf8").catch(() => "");
  return text
    .split("\n")
    .map((line) => line.split(" ")[4])
    .filter((p): p is string => p !== undefined && p !== "")
    .map((p) => p.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8))));
}

export class WorkspaceFilesystems {
  readonly imagesDir: string;
  private probed: Promise<WorkspaceFsState> | undefined;
  /** The probe's answer once it has one (synchronous readers: the security policy). */
  known: WorkspaceFsState | undefined;

  constructor(private readonly options: WorkspaceFsOptions) {
    this.imagesDir = join(options.workspacesDir, ".images");
  }

  /** Whether sessions get their own filesystem; probed once (a 4 MB image made, mounted and removed). */
  state(): Promise<WorkspaceFsState> {
    this.probed ??= this.probe().then((state) => (this.known = state));
    return this.probed;
  }

  private async probe(): Promise<WorkspaceFsState> {
    const directory = (reason: string): WorkspaceFsState => ({ active: "directory", reason });
    if (this.options.mode === "directory") return directory("configured (sessions.workspaceFilesystem: directory)");
    if (process.getuid?.() !== 0 || !this.options.hostUser) return directory("sandgate does not run as root");
    if (!existsSync("/dev/loop-control")) return directory("no loop devices (/dev/loop-control is missing)");
    this.ensureImagesDir();
    const probe = `.probe-${process.pid}-${randomBytes(4).toString("hex")}`;
    const image = join(this.imagesDir, `${probe}.img`);
    const mountAt = join(this.imagesDir, probe);
    try {
      await mkdir(mountAt, { mode: 0o700 });
      await this.makeImage(image, 4 << 20, 64);
      await tool("mount", ["-o", "loop,nosuid,nodev", image, mountAt]);
      await tool("umount", [mountAt]);
      return { active: "filesystem" };
    } catch (error) {
      await tool("umount", ["-l", mountAt]).catch(() => undefined);
      return directory(`a loop-mounted ext4 image could not be made: ${message(error)}`);
    } finally {
      await rmdir(mountAt).catch(() => undefined);
      await unlink(image).catch(() => undefined);
    }
  }

  private ensureImagesDir(): void {
    mkdirSync(this.imagesDir, { recursive: true, mode: 0o700 });
    chmodSync(this.imagesDir, 0o700);
  }

  imageOf(workspaceDir: string): string {
    return join(this.imagesDir, `${basename(workspaceDir)}.img`);
  }

  private async makeImage(image: string, bytes: number, inodes: number): Promise<void> {
    const file = await open(image, "wx", 0o600);
    try {
      await file.truncate(Math.max(bytes, MIN_IMAGE_BYTES));
    } finally {
      await file.close();
    }
    const { uid, gid } = this.options.hostUser ?? { uid: 0, gid: 0 };
    await tool("mkfs.ext4", ["-q", "-F", "-N", String(inodes), "-m", "0", "-O", "^has_journal", "-I", String(INODE_BYTES), "-b", "4096", "-E", `root_owner=${uid}:${gid},lazy_itable_init=1`, image]);
  }

  /**
   * Gives the (empty, just made) workspace directory its own filesystem when that is active.
   * True when mounted; false for a plain directory. Rejects when making or mounting fails.
   */
  async mount(workspaceDir: string): Promise<boolean> {
    if ((await this.state()).active !== "filesystem") return false;
    const image = this.imageOf(workspaceDir);
    try {
      // ext4 keeps 10 inodes for itself beyond the root directory (and rounds the count up to a
      // multiple of 16 per block group, so a few more entries than asked may fit).
      const inodes = this.options.inodes + RESERVED_INODES;
      // Room for the data plus the inode table, bitmaps and group descriptors; sparse, so the
      // host spends only what is written.
      await this.makeImage(image, this.options.bytes + inodes * INODE_BYTES + Math.ceil(this.options.bytes / 64) + (1 << 20), inodes);
      // noinit_itable: the kernel would otherwise zero the whole inode table in the background,
      // spending host disk on inodes never used.
      await tool("mount", ["-o", "loop,nosuid,nodev,noinit_itable", image, workspaceDir]);
    } catch (error) {
      await unlink(image).catch(() => undefined);
      throw new Error(`the workspace filesystem could not be made: ${message(error)}`, { cause: error });
    }
    // A fresh filesystem no sandbox has seen yet: safe to touch by path as root.
    await chmod(workspaceDir, 0o700);
    await rmdir(join(workspaceDir, "lost+found")).catch(() => undefined);
    return true;
  }

  /**
   * Unmounts a workspace's filesystem (lazily when something still holds it) and deletes its
   * image. Nothing to do for a plain directory. Never rejects.
   */
  async release(workspaceDir: string): Promise<void> {
    const image = this.imageOf(workspaceDir);
    if ((await this.mountedWorkspaces()).has(basename(workspaceDir))) {
      await tool("umount", [workspaceDir]).catch(() => tool("umount", ["-l", workspaceDir]).catch(() => undefined));
    }
    await unlink(image).catch(() => undefined);
  }

  /** Names of the workspace directories (children of the workspaces directory) that are mount points now. */
  async mountedWorkspaces(): Promise<Set<string>> {
    // mountinfo shows real paths: SANDBOX_DIR may lie behind a symlink.
    const root = await realpath(this.options.workspacesDir).catch(() => resolve(this.options.workspacesDir));
    return new Set((await mountPoints()).filter((p) => dirname(p) === root).map((p) => basename(p)));
  }

  /** Unmounts and removes probes a process that died mid-probe left under the images directory. */
  async sweepProbes(alive: (pid: number) => boolean): Promise<void> {
    const images = await realpath(this.imagesDir).catch(() => resolve(this.imagesDir));
    for (const point of await mountPoints()) {
      const pid = /^\.probe-(\d+)-/.exec(basename(point))?.[1];
      if (dirname(point) !== images || pid === undefined || alive(Number(pid))) continue;
      await tool("umount", ["-l", point]).catch(() => undefined);
      await rmdir(point).catch(() => undefined);
      await unlink(`${point}.img`).catch(() => undefined);
    }
  }

  /** Images whose workspace is gone (a crash between unmount and unlink): their names. */
  async strayImages(): Promise<string[]> {
    const names = await readdir(this.imagesDir).catch(() => [] as string[]);
    return names.filter((n) => n.endsWith(".img") && !n.startsWith(".") && !existsSync(join(this.options.workspacesDir, n.slice(0, -4))));
  }

  async deleteImage(name: string): Promise<void> {
    await unlink(join(this.imagesDir, name)).catch(() => undefined);
  }

  /** Bytes and inodes in use on a mounted workspace, from the filesystem's own counters. */
  async usage(workspaceDir: string): Promise<{ bytes: number; inodes: number }> {
    const st = await statfs(workspaceDir);
    return { bytes: (st.blocks - st.bfree) * st.bsize, inodes: st.files - st.ffree };
  }
}
