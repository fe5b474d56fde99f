// Launching one sandbox: the bubblewrap command for a runner with its limits and mounts, spawned
// with the pipes its runner channel needs, and bubblewrap's own options written to it on fd 8.

import type { ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { RUNNER_SPECS, type RunnerKind } from "../languages/index.js";
import { buildSandboxLaunch, scratchSizes } from "./bwrap-args.js";
import type { ChannelFds, ChannelVariant } from "./channel/index.js";
import { createToolFifos, type ToolFifos } from "./channel/tool-fifos.js";
import { TOOL_REPLIES_FD, TOOL_REQUESTS_FD } from "./channel/tool-pipe.js";
import type { ResolvedLimits } from "./limits.js";
import { activePackageMounts } from "./package-sets.js";
import { spawnBwrap } from "./process-group.js";
import { runnerCommand, SANDBOX_ENV } from "./runner-command.js";
import type { SandboxRuntime } from "./runtime.js";
import type { MachineJoin, SessionMachine } from "./machine.js";

/** The fd on which bubblewrap reads its arguments (after 5, seccomp). */
const BWRAP_ARGS_FD = 8;
/** The fd the launcher hands the seccomp program on. */
const SECCOMP_FD = 5;
/** Where a runner joining a machine gets the machine's namespaces, 9 to 12 (after the args fd): user, net, IPC, UTS. */
const MACHINE_FDS = 9;

export interface SandboxLaunchOptions {
  kind: RunnerKind;
  limits: ResolvedLimits;
  /** Host directory bound at /workspace; a size-capped tmpfs when absent. */
  workspaceDir?: string;
  channel: ChannelVariant;
  /** The session's machine to join (its namespaces, /tmp, /dev/shm); a sandbox of its own when absent. */
  machine?: SessionMachine;
}

export interface LaunchedSandbox {
  child: ChildProcess;
  stdout: Readable;
  stderr: Readable;
  /** The child's pipes by fd number, for the runner channel; 6 and 7 are the host's ends of the tool FIFOs. */
  fds: ChannelFds;
}

/** Spawns bubblewrap for one sandbox; the caller owns the process (kill it with killGroup). */
export function launchSandbox(runtime: SandboxRuntime, options: SandboxLaunchOptions): LaunchedSandbox {
  // In the runtime directory (mode 0711, next to etc/); removed when the sandbox closes.
  const fifos = createToolFifos(join(dirname(runtime.etcDir), "channels"), runtime.hostUser);
  try {
    return launchWith(runtime, options, fifos, options.machine?.join(MACHINE_FDS));
  } catch (error) {
    fifos.dispose();
    throw error;
  }
}

function launchWith(runtime: SandboxRuntime, options: SandboxLaunchOptions, fifos: ToolFifos, joining: MachineJoin | undefined): LaunchedSandbox {
  const { limits } = options;
  const hasMemoryCgroup = runtime.cgroups.controllers.includes("memory");
  const hasPidsCgroup = runtime.cgroups.controllers.includes("pids");
  const scratch = scratchSizes(limits.memoryMb * 1024 * 1024);
  const launch = buildSandboxLaunch(
    {
      bwrapPath: runtime.bwrapPath,
      mounts: {
        ...(options.workspaceDir === undefined ? {} : { workspaceDir: options.workspaceDir }),
        workspaceBytes: limits.workspaceBytes,
        runnersDir: runtime.runnersDir,
        etcDir: runtime.etcDir,
        readOnlyPaths: runtime.readOnlyPaths,
        volumes: runtime.volumes,
        ...(runtime.toolsDir ? { toolsDir: runtime.toolsDir } : {}),
        toolPipes: { requests: fifos.requestsPath, replies: fifos.repliesPath },
        tmpBytes: scratch.tmpBytes,
        shmBytes: scratch.shmBytes,
        packages: activePackageMounts(runtime.packagesDir),
        ...(joining ? { machine: { usernsFd: joining.usernsFd, tmpDir: joining.tmpDir, shmDir: joining.shmDir } } : {}),
      },
      env: { ...SANDBOX_ENV },
      command: runnerCommand(runtime, options.kind, limits),
      rlimits: {
        fileSizeBytes: limits.fileSizeBytes,
        openFiles: limits.openFiles,
        // Without a memory cgroup, cap the address space where the runner allows it (V8 reserves far more than it uses, so Node gets only its heap flag).
        ...(hasMemoryCgroup || !RUNNER_SPECS[options.kind].limitAddressSpace ? {} : { addressSpaceBytes: limits.memoryMb * 1024 * 1024 + 64 * 1024 * 1024 }),
        ...(hasPidsCgroup ? {} : { processes: limits.processes }),
      },
      ...(runtime.seccompFile ? { seccompFd: SECCOMP_FD } : {}),
    },
    BWRAP_ARGS_FD,
  );
  // fds 0-4: nothing, stdout, stderr, to the runner, from the runner; then what the channel needs.
  const stdio: Array<"pipe" | "ignore"> = ["ignore", "pipe", "pipe", "pipe", "pipe"];
  for (let fd = stdio.length; fd < BWRAP_ARGS_FD; fd++) stdio.push(options.channel.extraFds.includes(fd) ? "pipe" : "ignore");
  stdio.push("pipe");
  const child = spawnBwrap({
    // Joining a machine starts as root (nsenter) and drops to the sandbox user itself before bubblewrap.
    argv: joining ? [...joining.prefix, ...launch.argv] : launch.argv,
    stdio,
    seccomp: runtime.seccompFile ? { file: runtime.seccompFile, fd: SECCOMP_FD } : undefined,
    hostUser: joining ? undefined : runtime.hostUser,
    ...(joining ? { inherit: joining.inherit } : {}),
  });
  // The host's ends of the tool FIFOs, where the channel looks for them (nothing is inherited at these fds).
  const fds = [...(child.stdio as unknown as ChannelFds)];
  fds[TOOL_REPLIES_FD] = fifos.replies;
  fds[TOOL_REQUESTS_FD] = fifos.requests;
  child.once("close", () => fifos.dispose());
  const argsPipe = fds[BWRAP_ARGS_FD] as Writable;
  argsPipe.on("error", () => {
    // bubblewrap failed before reading its arguments; the sandbox's exit handler reports it
  });
  argsPipe.end(launch.args);
  return { child, stdout: child.stdout!, stderr: child.stderr!, fds };
}
