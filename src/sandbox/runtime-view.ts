// The runtime view: a tmpfs of this process's own (under /run/sandgate/views), from which sandboxes
// get sandgate's files (synthetic /etc, runners, tool channels, tool wrappers), so their mounts name no host path.

import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmdirSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The kernel shows a bind mount's root as its path inside the source filesystem (field 4 of
 * /proc/self/mountinfo), so a bind from the host's disk names SANDBOX_DIR to the code inside;
 * a bind from this tmpfs shows `/etc/passwd`, `/runners`, `/channels/...`, `/tools` instead.
 * Volumes are the admin's own directories: hiding theirs would need a copy, so they show theirs.
 */
export interface RuntimeView {
  /** Where sandgate's sandbox-facing files go: the tmpfs, or SANDBOX_DIR/runtime when none can be mounted. */
  dir: string;
  hidden: boolean;
  /** Why the view is not a tmpfs of its own (absent when hidden). */
  reason?: string;
  /** Unmounts the tmpfs (lazily: running sandboxes keep their binds). Idempotent. */
  close(): void;
}

/**
 * Outside SANDBOX_DIR, so that a process that dies without closing its view leaves no mount in
 * SANDBOX_DIR (which would stop `rm -r` of it); the next start of any sandgate sweeps it.
 */
const VIEWS_ROOT = "/run/sandgate/views";
const VIEW_PREFIX = "view-";
/** An upper bound only: tmpfs spends what is written (a few MB of runners and /etc copy). */
const VIEW_BYTES = 256 * 1024 * 1024;
const TOOL_ENV = { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", LC_ALL: "C" };

/** Views this process opened so far (names them apart). */
let opened = 0;

function tool(file: string, args: string[]): void {
  execFileSync(file, args, { env: TOOL_ENV, stdio: ["ignore", "ignore", "pipe"], timeout: 10_000 });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Views under `root` that are mount points now (mountinfo's field 5, octal escapes undone). */
function mountedViews(root: string): string[] {
  const text = readFileSync("/proc/self/mountinfo", "utf8");
  return text
    .split("\n")
    .map((line) => (line.split(" ")[4] ?? "").replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8))))
    .filter((point) => point.startsWith(`${root}/${VIEW_PREFIX}`));
}

/** Unmounts and removes the views of sandgate processes that ended without closing theirs. */
function sweepDeadViews(root: string): void {
  const mounted = new Set(mountedViews(root));
  for (const name of readdirSync(root).filter((entry) => entry.startsWith(VIEW_PREFIX))) {
    const pid = Number(name.slice(VIEW_PREFIX.length).split("-")[0]);
    if (!Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    const path = join(root, name);
    try {
      if (mounted.has(path)) tool("umount", ["-l", path]);
      rmdirSync(path);
    } catch {
      // left for the next start; it holds nothing but a copy of public files
    }
  }
}

/**
 * Mounts a view of this process's when sandgate runs as root and the host allows it (done once, at
 * start: nothing of it is on a sandbox's start path), else returns `runtimeDir` (a directory of
 * SANDBOX_DIR) itself. The runtime and code mode's tool wrappers each have one, closed apart.
 */
export function openRuntimeView(runtimeDir: string): RuntimeView {
  const plain = (reason: string): RuntimeView => ({ dir: runtimeDir, hidden: false, reason, close: () => undefined });
  if (process.getuid?.() !== 0) return plain("sandgate does not run as root, so it cannot mount a tmpfs for them");
  // One per runtime, not per process: engines of one process close apart (tests, doctor).
  const dir = join(VIEWS_ROOT, `${VIEW_PREFIX}${process.pid}-${++opened}`);
  try {
    mkdirSync(VIEWS_ROOT, { recursive: true, mode: 0o711 });
    // Search-only for others, up from /run: the sandbox user must pass through to bind from it.
    for (const path of [dirname(VIEWS_ROOT), VIEWS_ROOT]) chmodSync(path, 0o711);
    sweepDeadViews(VIEWS_ROOT);
    mkdirSync(dir, { recursive: true, mode: 0o711 });
    tool("mount", ["-t", "tmpfs", "-o", `size=${VIEW_BYTES},mode=0711,nosuid,nodev`, "sandgate", dir]);
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? "").trim();
    try {
      rmdirSync(dir);
    } catch {
      // never made
    }
    return plain(`a tmpfs could not be mounted at ${dir}: ${stderr || (error as Error).message}`.split("\n")[0] ?? "");
  }
  let open = true;
  return {
    dir,
    hidden: true,
    close: () => {
      if (!open) return;
      open = false;
      try {
        tool("umount", ["-l", dir]);
        rmdirSync(dir);
      } catch {
        // the next start sweeps it
      }
    },
  };
}
