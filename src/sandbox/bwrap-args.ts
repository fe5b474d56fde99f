// Builds the argv that starts one sandbox: a tiny /bin/sh launcher that sets rlimits, then
// execs bubblewrap with the namespaces, mounts and environment.

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
// blocks, `-v` KiB. (Joining cgroups is the host's job: see Sandbox.joinCgroup.)
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

export function buildSandboxArgv(options: SandboxArgvOptions): string[] {
  const { mounts, rlimits } = options;
  const bwrap: string[] = [
    options.bwrapPath,
    "--unshare-user",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--uid", String(SANDBOX_UID),
    "--gid", String(SANDBOX_GID),
    "--hostname", SANDBOX_HOSTNAME,
    "--die-with-parent",
    "--new-session",
    "--cap-drop", "ALL",
    "--disable-userns",
    "--ro-bind", "/usr", "/usr",
    // /usr/local holds host-installed tools that no interpreter needs; hide it.
    "--tmpfs", "/usr/local",
    "--remount-ro", "/usr/local",
  ];
  for (const [target, link] of USR_SYMLINKS) bwrap.push("--symlink", target, link);
  bwrap.push(
    "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
    "--ro-bind-try", "/etc/localtime", "/etc/localtime",
    "--ro-bind", `${mounts.etcDir}/passwd`, "/etc/passwd",
    "--ro-bind", `${mounts.etcDir}/group`, "/etc/group",
    "--ro-bind", `${mounts.etcDir}/hosts`, "/etc/hosts",
    "--ro-bind", `${mounts.etcDir}/hostname`, "/etc/hostname",
    "--proc", "/proc",
    "--dev", "/dev",
    "--tmpfs", "/tmp",
  );
  for (const path of mounts.readOnlyPaths) bwrap.push("--ro-bind", path, path);
  bwrap.push("--ro-bind", mounts.runnersDir, "/sandgate/runners");
  if (mounts.toolsDir) bwrap.push("--ro-bind", mounts.toolsDir, "/sandgate/tools");
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
  bwrap.push("--", ...options.command);

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
    ...bwrap,
  ];
}
