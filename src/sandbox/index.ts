// Public surface of the sandbox layer: runtime preparation, sandboxes, the warm pool, limits.
export { prepareRuntime, findBwrap, defaultInterpreters, giveToSandbox } from "./runtime.js";
export { openRuntimeView } from "./runtime-view.js";
export type { RuntimeView } from "./runtime-view.js";
export type { SandboxRuntime, RunnerKind, InterpreterPaths, RuntimeOptions, HostUser } from "./runtime.js";
export { Sandbox } from "./sandbox.js";
export { FsHelper, runFsHelper } from "./fs-helper.js";
export type { FsHelperOptions, FsHelperReply } from "./fs-helper.js";
export { downloadStream, uploadStream } from "./fs-transfer.js";
export type { DownloadStream, TransferHeader } from "./fs-transfer.js";
export { DEFAULT_MINIMUM_RATE, type MinimumRate } from "./transfer-pace.js";
export type { SandboxOptions, RunRequest, RunOutcome, RunStatus, OutputStream, OutputSink, OutputSpill, SpilledStream } from "./sandbox.js";
export { countNewlines } from "./call-output.js";
export { IMAGE_MIME_TYPES, rasterImageType } from "./images.js";
export type { RunImage, ImageCaps, ImageMime } from "./images.js";
export type { OperationHandler, OperationRequest, RunClock, UpstreamCall, UpstreamCallReply, UpstreamCallHandler } from "./upstream-calls.js";
export { OPERATION_ID } from "./upstream-calls.js";
export { WarmPool } from "./warm-pool.js";
export { SessionMachine, machinesSupported } from "./machine.js";
export { OutputMask } from "./output-mask.js";
export type { SecretValue } from "./output-mask.js";
export type { PoolSizes, PoolKindState } from "./warm-pool.js";
export { describeFlavors, effectiveFlavors, resolveLimits, sandboxShapeKey } from "./limits.js";
export type { EffectiveFlavor, ResolvedLimits, LimitOverrides } from "./limits.js";
export { detectCgroups } from "./cgroups.js";
export type { CgroupSupport, CgroupMode } from "./cgroups.js";
export type { VolumeMount } from "./bwrap-args.js";
export { describePackageSets, installedPackageNames, PACKAGE_LANGUAGES } from "./package-sets.js";
export type { PackageLanguage, PackageManifest } from "./package-sets.js";
export { buildSeccompProgram, SECCOMP_DENIED_SYSCALLS } from "./seccomp.js";

import type { SandboxRuntime } from "./runtime.js";
import { Sandbox, type SandboxOptions } from "./sandbox.js";

export function startSandbox(runtime: SandboxRuntime, options: SandboxOptions): Promise<Sandbox> {
  return Sandbox.start(runtime, options);
}
export { WorkspaceFilesystems } from "./workspace-fs.js";
export type { WorkspaceFsMode, WorkspaceFsState, WorkspaceFsOptions } from "./workspace-fs.js";
