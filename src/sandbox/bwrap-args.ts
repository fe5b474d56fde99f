// Builds the argv that starts one sandbox: a tiny /bin/sh launcher that sets rlimits, then
// execs bubblewrap with the namespaces, mounts and environment (passed on a pipe, not in argv).

import { hostEtcImage, SYNTHETIC_ETC_FILES } from "./host-etc-image.js";
import { hostImageArguments, usrLocalArguments } from "./host-image.js";
import { TOOL_REPLIES_PATH, TOOL_REQUESTS_PATH } from "./channel/tool-fifos.js";

export interface MountPlan {
  /** Host directory bound read-write at /workspace; when absent, /workspace is a size-capped tmpfs. */
  workspaceDir?: string;
  workspaceBytes: number;
  /** Host directory with the runner scripts, bound read-only at /sandgate/runners. */
  runnersDir: string;
  /** Host directory with the synthetic passwd, group and hosts files. */
  etcDir: string;
  /** Extra read-only binds (host path = sandbox path), e.g. an interpreter installed outside /usr. */
  readOnlyPaths: string[];
  /** Admin-configured host directories, each mounted at /mnt/<name>. */
  volumes: VolumeMount[];
  /**
   * Host directory of generated tool wrappers, bound read-only at /sandgate/tools. A bind of the
   * directory, so files later replaced inside it (by rename) show up in running sandboxes.
   */
  toolsDir?: string;
  /** Host paths of the sandbox's tool FIFOs (channel/tool-fifos.ts), bound read-only at /sandgate/channel. */
  toolPipes?: { requests: string; replies: string };
  /**
   * Size of the /tmp tmpfs in bytes. Without a memory cgroup nothing else bounds it (tmpfs pages
   * are charged to the cgroup when there is one); unset leaves it unsized.
   */
  tmpBytes?: number;
  /** Size of the /dev/shm tmpfs in bytes; /dev itself is read-only. Unset: 64 MiB. */
  shmBytes?: number;
  /** The admin's package sets, each bound read-only at /sandgate/packages/<language> (see package-sets.ts). */
  packages?: Array<{ language: string; hostPath: string }>;
  /** A runner joining its session's machine (machine.ts): the fd (in bubblewrap) of its user namespace, and the host's tmpfs directories of its /tmp and /dev/shm. */
  machine?: { usernsFd?: number; tmpDir: string; shmDir: string };
}

export interface VolumeMount {
  name: string;
  hostPath: string;
  readOnly: boolean;
}

export interface LauncherRlimits {
  fileSizeBytes: number;
  openFiles: number;
  /** RLIMIT_AS in bytes when no memory cgroup is available; undefined leaves it unlimited. */
  addressSpaceBytes?: number;
  /** RLIMIT_NPROC when no pids cgroup is available. */
  processes?: number;
  /** Soft RLIMIT_CPU per process, seconds. */
  cpuSeconds?: number;
}

export interface SandboxArgvOptions {
  bwrapPath: string;
  mounts: MountPlan;
  env: Record<string, string>;
  command: string[];
  rlimits: LauncherRlimits;
  /** fd number (in the launcher) carrying the seccomp program, if any. */
  seccompFd?: number;
}

export const SANDBOX_UID = 1000;
export const SANDBOX_GID = 1000;
export const SANDBOX_HOSTNAME = "sandgate";
// $1..$5 = rlimits ("-" = leave as is), then bwrap's argv. dash's `ulimit -f` counts 512-byte
// blocks, `-v` KiB. (Joining cgroups is the host's job: see joinEarly in containment.ts.)
const LAUNCHER_SCRIPT = [
  'ulimit -c 0; ulimit -f "$1"; ulimit -n "$2"',
  '[ "$3" = - ] || ulimit -v "$3"',
  '[ "$4" = - ] || ulimit -p "$4"', // dash's -p is RLIMIT_NPROC
  '[ "$5" = - ] || ulimit -S -t "$5"',
  'shift 5',
  'exec "$@"',
].join("\n");

/** The directories of a merged-/usr Debian or Ubuntu host that interpreters need. */
const USR_SYMLINKS: Array<[string, string]> = [
  ["usr/bin", "/bin"],
  ["usr/sbin", "/sbin"],
  ["usr/lib", "/lib"],
  ["usr/lib64", "/lib64"],
];

const DEFAULT_SHM_BYTES = 64 * 1024 * 1024;

/** The sizes of a sandbox's /tmp and /dev/shm for a memory limit: all of it, and a quarter up to 64 MiB. */
export function scratchSizes(memoryBytes: number): { tmpBytes: number; shmBytes: number } {
  return { tmpBytes: memoryBytes, shmBytes: Math.max(1024 * 1024, Math.min(DEFAULT_SHM_BYTES, Math.floor(memoryBytes / 4))) };
}

/**
 * What every bubblewrap process of sandgate shares (sandboxes and the file helper): new
 * namespaces, the unprivileged sandbox identity, no capabilities, and a read-only /usr (see host-image.ts).
 */
export function isolationArguments(machineUsernsFd?: number): string[] {
  // A runner joining a machine enters its user namespace, whose nested namespaces are already
  // disabled (asserted), and was put in its network, IPC and UTS namespaces by nsenter; its pid
  // namespace is its own, so that its end-of-call cleanup reaches only what its own calls started.
  const namespaces =
    machineUsernsFd === undefined
      ? ["--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
      : ["--userns", String(machineUsernsFd), "--assert-userns-disabled", "--unshare-pid"];
  const args = [
    ...namespaces,
    "--unshare-cgroup-try",
    "--uid", String(SANDBOX_UID),
    "--gid", String(SANDBOX_GID),
    ...(machineUsernsFd === undefined ? ["--hostname", SANDBOX_HOSTNAME] : []),
    "--die-with-parent",
    "--new-session",
    "--cap-drop", "ALL",
    ...(machineUsernsFd === undefined ? ["--disable-userns"] : []),
    "--ro-bind", "/usr", "/usr",
    ...usrLocalArguments(),
  ];
  for (const [target, link] of USR_SYMLINKS) args.push("--symlink", target, link);
  return args;
}

/** bubblewrap's arguments, without the program name. */
function bwrapArguments(options: SandboxArgvOptions): string[] {
  const { mounts } = options;
  const bwrap = isolationArguments(mounts.machine?.usernsFd);
  // /etc: the host image and the synthetic files, as one copy (and a few binds) when it can be made (host-etc-image.ts).
  const etcImage = hostEtcImage(mounts.etcDir);
  if (etcImage) {
    bwrap.push("--ro-bind", etcImage.dir, "/etc");
    for (const path of etcImage.binds) bwrap.push("--ro-bind-try", path, path);
  } else {
    bwrap.push(...hostImageArguments());
    for (const name of SYNTHETIC_ETC_FILES) bwrap.push("--ro-bind", `${mounts.etcDir}/${name}`, `/etc/${name}`);
  }
  bwrap.push(
    "--proc", "/proc",
    // --dev makes /dev a tmpfs of its own that the sandbox user owns: read-only, with a sized /dev/shm.
    "--dev", "/dev",
  );
  if (mounts.machine) {
    // The machine's own /dev/shm and /tmp (tmpfs mounts the host made): one of each per session, whichever runner writes.
    bwrap.push("--bind", mounts.machine.shmDir, "/dev/shm", "--remount-ro", "/dev", "--bind", mounts.machine.tmpDir, "/tmp");
  } else {
    bwrap.push(
      "--size", String(mounts.shmBytes ?? DEFAULT_SHM_BYTES), "--tmpfs", "/dev/shm",
      "--remount-ro", "/dev",
      ...(mounts.tmpBytes === undefined ? [] : ["--size", String(mounts.tmpBytes)]),
      "--tmpfs", "/tmp",
    );
  }
  for (const path of mounts.readOnlyPaths) bwrap.push("--ro-bind", path, path);
  bwrap.push("--ro-bind", mounts.runnersDir, "/sandgate/runners");
  if (mounts.toolsDir) bwrap.push("--ro-bind", mounts.toolsDir, "/sandgate/tools");
  // Read-only: a FIFO still opens for writing, but the sandbox cannot chmod or replace it.
  if (mounts.toolPipes) bwrap.push("--ro-bind", mounts.toolPipes.requests, TOOL_REQUESTS_PATH, "--ro-bind", mounts.toolPipes.replies, TOOL_REPLIES_PATH);
  for (const set of mounts.packages ?? []) {
    bwrap.push("--ro-bind", set.hostPath, `/sandgate/packages/${set.language}`);
    // ESM import() ignores NODE_PATH; it walks up from /workspace to /node_modules, so that is where the set appears too.
    if (set.language === "node") bwrap.push("--symlink", "/sandgate/packages/node/node_modules", "/node_modules");
  }
  for (const volume of mounts.volumes) bwrap.push(volume.readOnly ? "--ro-bind" : "--bind", volume.hostPath, `/mnt/${volume.name}`);
  if (mounts.workspaceDir) {
    bwrap.push("--bind", mounts.workspaceDir, "/workspace");
  } else {
    bwrap.push("--perms", "0777", "--size", String(mounts.workspaceBytes), "--tmpfs", "/workspace");
  }
  // The root is bwrap's private tmpfs; freeze it so only /workspace and /tmp take writes.
  bwrap.push("--remount-ro", "/", "--chdir", "/workspace", "--clearenv");
  for (const [key, value] of Object.entries(options.env)) bwrap.push("--setenv", key, value);
  if (options.seccompFd !== undefined) bwrap.push("--seccomp", String(options.seccompFd));
  return bwrap;
}

/** The launcher's argv up to bubblewrap's program name. */
function launcherArgv(rlimits: LauncherRlimits): string[] {
  const blocks = Math.max(1, Math.ceil(rlimits.fileSizeBytes / 512));
  return [
    "/bin/sh",
    "-c",
    LAUNCHER_SCRIPT,
    "sandgate-launch",
    String(blocks),
    String(rlimits.openFiles),
    rlimits.addressSpaceBytes === undefined ? "-" : String(Math.ceil(rlimits.addressSpaceBytes / 1024)),
    rlimits.processes === undefined ? "-" : String(rlimits.processes),
    rlimits.cpuSeconds === undefined ? "-" : String(Math.ceil(rlimits.cpuSeconds)),
  ];
}

/** The whole argv, bubblewrap's arguments included (for tools that start a one-off sandbox). */
export function buildSandboxArgv(options: SandboxArgvOptions): string[] {
  return [...launcherArgv(options.rlimits), options.bwrapPath, ...bwrapArguments(options), "--", ...options.command];
}

/**
 * The argv with bubblewrap's options moved to `argsFd` (`bwrap --args N -- COMMAND`), and the
 * bytes to write there. The sandbox's pid 1 is a fork of bubblewrap, so its /proc/1/cmdline would
 * otherwise show the host paths of the workspace, volumes and runtime to the code inside; the
 * command (interpreter and runner, paths as seen inside) must stay in argv for bubblewrap.
 */
export function buildSandboxLaunch(options: SandboxArgvOptions, argsFd: number): { argv: string[]; args: Buffer } {
  const args = bwrapArguments(options);
  if (args.some((arg) => arg.includes("\u0000"))) throw new Error("a bubblewrap argument contains a NUL byte");
  return {
    argv: [...launcherArgv(options.rlimits), options.bwrapPath, "--args", String(argsFd), "--", ...options.command],
    args: Buffer.from(`${args.join("\u0000")}\u0000`, "utf8"),
  };
}
