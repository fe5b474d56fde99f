// A session's machine: one bubblewrap sandbox holding the session's network, IPC, UTS and user
// namespaces and its cgroup, and the tmpfs of its /tmp and /dev/shm, which each language's runner joins.

import { execFile, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { SandgateError } from "../errors/index.js";
import { buildSandboxLaunch, scratchSizes } from "./bwrap-args.js";
import { SandboxCgroup } from "./cgroups.js";
import { ensureInside, joinEarly } from "./containment.js";
import type { ResolvedLimits } from "./limits.js";
import { activePackageMounts } from "./package-sets.js";
import { killGroup, spawnBwrap } from "./process-group.js";
import { childrenOf } from "./runner-signal.js";
import { SANDBOX_ENV } from "./runner-command.js";
import type { SandboxRuntime } from "./runtime.js";

const NSENTER = ["/usr/bin/nsenter", "/bin/nsenter"].find((path) => existsSync(path));
const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv"].find((path) => existsSync(path));
/** The machine's only process of its own: it keeps the namespaces and mounts alive and does nothing. */
const HOLDER = ["/usr/bin/sleep", "infinity"];
const BWRAP_ARGS_FD = 8;
const SECCOMP_FD = 5;

/**
 * Whether runners can join a machine here: the host enters the machine's network, IPC and UTS
 * namespaces (nsenter, which needs root) and drops to the sandbox user (setpriv) before bubblewrap.
 */
export function machinesSupported(runtime: SandboxRuntime): boolean {
  return runtime.hostUser !== undefined && NSENTER !== undefined && SETPRIV !== undefined;
}

/** What a runner's launch needs to join the machine: the fd it must inherit, its mounts, and the argv that enters it. */
export interface MachineJoin {
  /** The machine's user namespace, opened for this launch; closed once it is spawned. */
  usernsFd: number;
  /** Host directories (tmpfs mounts) bound at /tmp and /dev/shm. */
  tmpDir: string;
  shmDir: string;
  /** nsenter (network, IPC, UTS) then setpriv (the sandbox user), before the launcher and bubblewrap. */
  prefix: string[];
  close: () => void;
}

export class SessionMachine {
  private readonly child: ChildProcess;
  /** The holder's host pid, once it runs. */
  private holder: number | undefined;
  private exited = false;
  private readonly closed: Promise<void>;
  private disposed: Promise<void> | undefined;
  private launchErr = "";
  /** Runs under way in the machine's runners, and runners starting: the machine is frozen only at none. */
  private active = 0;
  private frozen = false;

  private constructor(
    private readonly runtime: SandboxRuntime,
    readonly limits: ResolvedLimits,
    /** The session's cgroup: its limits hold for every runner of the session together. */
    readonly cgroup: SandboxCgroup | undefined,
    workspaceDir: string,
    /** Host directory holding the /tmp and /dev/shm tmpfs mounts; root's, mode 0711. */
    private readonly dir: string,
  ) {
    const scratch = scratchSizes(limits.memoryMb * 1024 * 1024);
    const launch = buildSandboxLaunch(
      {
        bwrapPath: runtime.bwrapPath,
        mounts: {
          workspaceDir,
          workspaceBytes: limits.workspaceBytes,
          runnersDir: runtime.runnersDir,
          etcDir: runtime.etcDir,
          readOnlyPaths: runtime.readOnlyPaths,
          volumes: runtime.volumes,
          tmpBytes: scratch.tmpBytes,
          shmBytes: scratch.shmBytes,
          packages: activePackageMounts(runtime.packagesDir),
          machine: { tmpDir: join(dir, "tmp"), shmDir: join(dir, "shm") },
        },
        env: { ...SANDBOX_ENV },
        command: HOLDER,
        rlimits: { fileSizeBytes: limits.fileSizeBytes, openFiles: limits.openFiles },
        ...(runtime.seccompFile ? { seccompFd: SECCOMP_FD } : {}),
      },
      BWRAP_ARGS_FD,
    );
    const stdio: Array<"pipe" | "ignore"> = ["ignore", "ignore", "pipe"];
    while (stdio.length < BWRAP_ARGS_FD) stdio.push("ignore");
    stdio.push("pipe");
    this.child = spawnBwrap({
      argv: launch.argv,
      stdio,
      seccomp: runtime.seccompFile ? { file: runtime.seccompFile, fd: SECCOMP_FD } : undefined,
      hostUser: runtime.hostUser,
    });
    this.child.stderr?.on("data", (chunk: Buffer) => {
      if (this.launchErr.length < 4096) this.launchErr += chunk.toString("utf8");
    });
    const args = (this.child.stdio as unknown as Array<NodeJS.WritableStream | null>)[BWRAP_ARGS_FD];
    args?.on("error", () => {
      // bubblewrap failed before reading its arguments; start() reports its exit
    });
    args?.end(launch.args);
    this.child.once("exit", () => {
      this.exited = true;
    });
    this.child.once("error", (error) => {
      this.launchErr += `${error.message}\n`;
      this.exited = true;
    });
    this.closed = new Promise((resolve) => this.child.once("close", () => resolve()));
  }

  /** Starts a machine with `limits` (memory, processes and CPU for the whole session) over `workspaceDir`. */
  static async start(runtime: SandboxRuntime, limits: ResolvedLimits, workspaceDir: string): Promise<SessionMachine> {
    const dir = await makeScratch(runtime, limits);
    let cgroup: SandboxCgroup | undefined;
    let machine: SessionMachine;
    try {
      cgroup = SandboxCgroup.create(runtime.cgroups, { memoryBytes: limits.memoryMb * 1024 * 1024, pids: limits.processes, cpus: limits.cpus });
      machine = new SessionMachine(runtime, limits, cgroup, workspaceDir, dir);
    } catch (error) {
      await cgroup?.release();
      await removeScratch(dir);
      throw error;
    }
    try {
      const outer = machine.child.pid;
      if (outer === undefined) throw new SandgateError("SANDBOX_FAILED", `the session's sandbox failed to start: ${machine.launchErr.trim() || "bubblewrap did not run"}`);
      if (cgroup) await joinEarly(cgroup, outer, () => machine.exited);
      machine.holder = await machine.findHolder(outer);
      if (cgroup) await ensureInside(cgroup, outer, "session's");
    } catch (error) {
      await machine.dispose();
      throw error;
    }
    return machine;
  }

  /** The holder: bubblewrap's grandchild once it runs the holder program (bubblewrap is unreaped, so the pids are ours). */
  private async findHolder(outer: number): Promise<number> {
    const deadline = Date.now() + 15_000;
    while (!this.exited && Date.now() < deadline) {
      for (const init of childrenOf(outer)) {
        for (const pid of childrenOf(init)) {
          try {
            if (readFileSync(`/proc/${pid}/comm`, "latin1").trim() === "sleep") return pid;
          } catch {
            // it went away while we looked
          }
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    throw new SandgateError("SANDBOX_FAILED", `the session's sandbox failed to start: ${this.launchErr.trim().slice(0, 500) || (this.exited ? "bubblewrap exited" : "it did not start within 15 s")}`);
  }

  get alive(): boolean {
    return !this.exited && this.disposed === undefined && this.holder !== undefined;
  }

  whenClosed(): Promise<void> {
    return this.closed;
  }

  /**
   * Opens what a runner's launch joins. As root, through /proc of the holder (bubblewrap is our
   * unreaped child, so its grandchild's pid is still the holder's): the final name must not be a
   * link, and /tmp and /dev/shm are mount points of a read-only root the sandbox cannot replace.
   */
  join(): MachineJoin {
    const holder = this.holder;
    const hostUser = this.runtime.hostUser;
    if (!this.alive || holder === undefined || !hostUser || !NSENTER || !SETPRIV) throw new SandgateError("SANDBOX_FAILED", "the session's sandbox has stopped");
    let usernsFd: number | undefined;
    const close = (): void => {
      if (usernsFd !== undefined) closeSync(usernsFd);
      usernsFd = undefined;
    };
    try {
      usernsFd = openSync(`/proc/${holder}/ns/user`, "r");
      const prefix = [
        NSENTER,
        `--net=/proc/${holder}/ns/net`,
        `--ipc=/proc/${holder}/ns/ipc`,
        `--uts=/proc/${holder}/ns/uts`,
        "--",
        SETPRIV,
        "--reuid", String(hostUser.uid),
        "--regid", String(hostUser.gid),
        "--clear-groups",
        "--",
      ];
      return { usernsFd, tmpDir: join(this.dir, "tmp"), shmDir: join(this.dir, "shm"), prefix, close };
    } catch (error) {
      close();
      throw new SandgateError("SANDBOX_FAILED", "the session's sandbox could not be joined; stop the session and start a new one", { cause: error });
    }
  }

  /** A run (or a runner's start) begins: the machine is thawed until none is under way. */
  enter(): void {
    this.active++;
    this.thaw();
  }

  /** A run ended: with none under way, everything in the machine waits, frozen, for the next. */
  leave(): void {
    this.active = Math.max(0, this.active - 1);
    this.settle();
  }

  /** Freezes the machine again if no run is under way (a runner killed while idle thawed it). */
  settle(): void {
    if (this.active === 0 && !this.frozen && this.alive && this.cgroup?.freeze()) this.frozen = true;
  }

  /** Thaws without counting a run (a kill or an interrupt must find its processes running). */
  thaw(): void {
    if (!this.frozen) return;
    this.frozen = false;
    this.cgroup?.thaw();
  }

  get isFrozen(): boolean {
    return this.frozen;
  }

  /** Kills the machine and every runner in it; safe to call twice. */
  dispose(): Promise<void> {
    this.disposed ??= (async () => {
      this.thaw();
      if (!this.exited) killGroup(this.child);
      this.cgroup?.killAll();
      await Promise.race([this.closed, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      await this.cgroup?.release();
      await removeScratch(this.dir);
    })();
    return this.disposed;
  }
}

/** mount and umount live in /sbin or /usr/sbin, which a service's PATH may lack. */
const TOOL_ENV = { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" };
const run = promisify(execFile);

/** Runs mount or umount off the event loop. */
async function tool(name: string, args: string[]): Promise<void> {
  await run(name, args, { timeout: 10_000, env: TOOL_ENV });
}
let swept = false;

/**
 * The machine's /tmp and /dev/shm: tmpfs mounts the host makes (as root) in a directory of its own,
 * sized like a sandbox's, owned by the sandbox user; their pages are charged to the cgroup of the
 * process that writes them. Named with the server's pid, so a later start removes what a crash left.
 */
async function makeScratch(runtime: SandboxRuntime, limits: ResolvedLimits): Promise<string> {
  const root = join(dirname(runtime.etcDir), "machines");
  mkdirSync(root, { recursive: true, mode: 0o711 });
  chmodSync(root, 0o711);
  if (!swept) {
    swept = true;
    for (const name of readdirSync(root)) {
      const pid = Number(name.split("-")[0]);
      if (Number.isInteger(pid) && pid !== process.pid && !existsSync(`/proc/${pid}`)) await removeScratch(join(root, name));
    }
  }
  const dir = join(root, `${process.pid}-${randomBytes(6).toString("hex")}`);
  const owner = runtime.hostUser;
  const scratch = scratchSizes(limits.memoryMb * 1024 * 1024);
  try {
    mkdirSync(dir, { mode: 0o711 });
    for (const [name, bytes] of [["tmp", scratch.tmpBytes], ["shm", scratch.shmBytes]] as const) {
      const at = join(dir, name);
      mkdirSync(at, { mode: 0o700 });
      const options = `size=${bytes},mode=0755,nosuid,nodev${owner ? `,uid=${owner.uid},gid=${owner.gid}` : ""}`;
      await tool("mount", ["-t", "tmpfs", "-o", options, "tmpfs", at]);
    }
  } catch (error) {
    await removeScratch(dir);
    throw new SandgateError("SANDBOX_FAILED", "the session's /tmp could not be made", { cause: error });
  }
  return dir;
}

/** Unmounts (lazily, should anything still hold them) and removes a machine's scratch directory. */
async function removeScratch(dir: string): Promise<void> {
  for (const name of ["tmp", "shm"]) {
    try {
      await tool("umount", ["-l", join(dir, name)]);
    } catch {
      // not mounted
    }
  }
  // Only empty directories go: what is still mounted (or was written into) is never walked as root.
  for (const path of [join(dir, "tmp"), join(dir, "shm"), dir]) {
    try {
      rmdirSync(path);
    } catch {
      // gone already, or still held: left for a later start's sweep
    }
  }
}
