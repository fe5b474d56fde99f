// A session's machine: one bubblewrap sandbox holding the session's network, IPC, UTS and user
// namespaces and its cgroup, and the tmpfs of its /tmp and /dev/shm, which each language's runner joins.

import { execFile, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { SandgateError } from "../errors/index.js";
import { buildSandboxLaunch, scratchSizes } from "./bwrap-args.js";
import { IdleFreezer, SandboxCgroup } from "./cgroups.js";
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

/** What a runner's launch needs to join the machine: the fds it must inherit, its mounts, and the argv that enters it. */
export interface MachineJoin {
  /** The machine's namespaces, held open by the machine: the child gets `from` at `fd`; the machine keeps (and later closes) its own. */
  inherit: ReadonlyArray<{ fd: number; from: number }>;
  /** The fd (in the child, so in bubblewrap) of the machine's user namespace. */
  usernsFd: number;
  /** Host directories (tmpfs mounts) bound at /tmp and /dev/shm. */
  tmpDir: string;
  shmDir: string;
  /** nsenter (network, IPC, UTS, through the inherited fds) then setpriv (the sandbox user), before the launcher and bubblewrap. */
  prefix: string[];
}

/** The namespaces a runner joins, in the order of their fds in the child (the user namespace first). */
const JOINED_NAMESPACES = ["user", "net", "ipc", "uts"] as const;
type JoinedNamespace = (typeof JOINED_NAMESPACES)[number];

/** Who the holder is: its parent (bubblewrap's init) and start time, which a process given its pid later cannot share. */
interface ProcessIdentity {
  ppid: number;
  startTime: string;
}

export class SessionMachine {
  private readonly child: ChildProcess;
  /** The holder's host pid and who it was, once it runs. */
  private holder: { pid: number; identity: ProcessIdentity } | undefined;
  /**
   * The holder's namespaces, opened once while it was known to be the holder, and held until the
   * machine is disposed: runners join through these, never through /proc/<holder>, whose pid
   * could name another process once the holder died.
   */
  private namespaces: Record<JoinedNamespace, number> | undefined;
  private exited = false;
  private readonly closed: Promise<void>;
  private disposed: Promise<void> | undefined;
  private launchErr = "";
  /** Runs under way in the machine's runners, and runners starting: the machine is frozen only at none. */
  private active = 0;
  /** Frozen while no run is under way. */
  private readonly freezer: IdleFreezer;

  private constructor(
    private readonly runtime: SandboxRuntime,
    readonly limits: ResolvedLimits,
    /** The session's cgroup: its limits hold for every runner of the session together. */
    readonly cgroup: SandboxCgroup | undefined,
    workspaceDir: string,
    /** Host directory holding the /tmp and /dev/shm tmpfs mounts; root's, mode 0711. */
    private readonly dir: string,
  ) {
    this.freezer = new IdleFreezer(cgroup);
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
      machine.holdNamespaces(outer, await machine.findHolder(outer));
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

  /**
   * Opens the holder's namespaces, between two reads of its identity: the same start time and
   * parent after the opens as before, that parent a child of bubblewrap (`outer`, unreaped while
   * no exit was seen, so its pid is still ours), means the pid was the holder's throughout.
   */
  private holdNamespaces(outer: number, holder: number): void {
    const before = processIdentity(holder);
    const opened: Partial<Record<JoinedNamespace, number>> = {};
    try {
      for (const ns of JOINED_NAMESPACES) opened[ns] = openSync(`/proc/${holder}/ns/${ns}`, "r");
    } catch (error) {
      for (const fd of Object.values(opened)) closeSync(fd);
      throw new SandgateError("SANDBOX_FAILED", "the session's sandbox stopped while it started", { cause: error });
    }
    const namespaces = opened as Record<JoinedNamespace, number>;
    const after = processIdentity(holder);
    if (!before || !after || !sameProcess(before, after) || this.exited || !childrenOf(outer).includes(after.ppid)) {
      for (const fd of Object.values(namespaces)) closeSync(fd);
      throw new SandgateError("SANDBOX_FAILED", "the session's sandbox stopped while it started");
    }
    this.holder = { pid: holder, identity: after };
    this.namespaces = namespaces;
  }

  /** Closes the held namespaces; safe to call twice. */
  private releaseNamespaces(): void {
    const namespaces = this.namespaces;
    this.namespaces = undefined;
    for (const fd of Object.values(namespaces ?? {})) closeSync(fd);
  }

  /** The holder still runs: its pid still names the process found at the start. */
  private holderRuns(): boolean {
    const now = this.holder && processIdentity(this.holder.pid);
    return now !== undefined && this.holder !== undefined && sameProcess(now, this.holder.identity);
  }

  /** The machine runs: also false once its holder is gone, before bubblewrap's exit is seen (a session then starts a new one). */
  get alive(): boolean {
    return !this.exited && this.disposed === undefined && this.namespaces !== undefined && this.holderRuns();
  }

  whenClosed(): Promise<void> {
    return this.closed;
  }

  /**
   * What a runner's launch joins, its fds numbered from `firstFd` in the child. As root, nsenter
   * opens them through /proc/self/fd (its own copies, so no pid names them); /tmp and /dev/shm are
   * mount points of a read-only root the sandbox cannot replace. A holder that has died (its
   * bubblewrap's exit not seen yet) is refused here rather than joined in its remains.
   */
  join(firstFd: number): MachineJoin {
    const hostUser = this.runtime.hostUser;
    const namespaces = this.namespaces;
    if (!this.alive || !namespaces || !hostUser || !NSENTER || !SETPRIV) throw new SandgateError("SANDBOX_FAILED", "the session's sandbox has stopped");
    const inherit = JOINED_NAMESPACES.map((ns, i) => ({ fd: firstFd + i, from: namespaces[ns] }));
    const at = (ns: JoinedNamespace): string => `/proc/self/fd/${firstFd + JOINED_NAMESPACES.indexOf(ns)}`;
    const prefix = [
      NSENTER,
      `--net=${at("net")}`,
      `--ipc=${at("ipc")}`,
      `--uts=${at("uts")}`,
      "--",
      SETPRIV,
      "--reuid", String(hostUser.uid),
      "--regid", String(hostUser.gid),
      "--clear-groups",
      "--",
    ];
    return { inherit, usernsFd: firstFd, tmpDir: join(this.dir, "tmp"), shmDir: join(this.dir, "shm"), prefix };
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

  /**
   * Freezes the machine again, shortly, if no run is under way by then (a runner killed while idle
   * thawed it): calls back to back pay no freeze and thaw, each a synchronous cgroup write.
   */
  settle(): void {
    if (this.active === 0) this.freezer.schedule(() => this.active === 0 && this.alive);
  }

  /** Thaws without counting a run (a kill or an interrupt must find its processes running). */
  thaw(): void {
    this.freezer.thaw();
  }

  get isFrozen(): boolean {
    return this.freezer.isFrozen;
  }

  /** Kills the machine and every runner in it; safe to call twice. */
  dispose(): Promise<void> {
    this.disposed ??= (async () => {
      this.thaw();
      if (!this.exited) killGroup(this.child);
      this.cgroup?.killAll();
      await Promise.race([this.closed, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      this.releaseNamespaces();
      await this.cgroup?.release();
      await removeScratch(this.dir);
    })();
    return this.disposed;
  }
}

/** A process's parent and start time (fields 4 and 22 of /proc/<pid>/stat), or undefined once it is gone. */
function processIdentity(pid: number): ProcessIdentity | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: the fields after its last ")" are plain.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ppid = Number(fields[1]);
  const startTime = fields[19];
  return Number.isInteger(ppid) && startTime ? { ppid, startTime } : undefined;
}

function sameProcess(a: ProcessIdentity, b: ProcessIdentity): boolean {
  return a.ppid === b.ppid && a.startTime === b.startTime;
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
