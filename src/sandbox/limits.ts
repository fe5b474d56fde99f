// Resolves the limits of one call: flavor presets, per-call overrides and admin maximums.
// Anything above a maximum is refused with LIMIT_EXCEEDED rather than silently lowered.

import { defaultTimeoutS, type FlavorName, type SandgateConfig } from "../config/index.js";
import { SandgateError } from "../errors/index.js";

export interface LimitOverrides {
  flavor?: FlavorName;
  timeoutS?: number;
  memoryMb?: number;
}

export interface ResolvedLimits {
  flavor: FlavorName;
  timeoutMs: number;
  memoryMb: number;
  cpus: number;
  processes: number;
  fileSizeBytes: number;
  workspaceBytes: number;
  openFiles: number;
  outputCapBytes: number;
  displayBytes: number;
}

function checkMax(name: string, value: number | undefined, max: number, unit: string): void {
  if (value === undefined) return;
  if (!Number.isFinite(value) || value <= 0) {
    throw new SandgateError("INVALID_INPUT", `${name} must be a positive number, got ${String(value)}`, { data: { field: name } });
  }
  if (value > max) {
    throw new SandgateError("LIMIT_EXCEEDED", `${name} ${value} ${unit} is above the admin maximum of ${max} ${unit}`, {
      data: { field: name, requested: value, maximum: max },
    });
  }
}

export function resolveLimits(config: SandgateConfig, overrides: LimitOverrides = {}): ResolvedLimits {
  const { limits } = config;
  const flavorName = overrides.flavor ?? config.defaultFlavor;
  const flavor = config.flavors[flavorName];
  if (!flavor) {
    throw new SandgateError("INVALID_INPUT", `unknown flavor ${JSON.stringify(flavorName)}; use small, medium or large`, {
      data: { field: "flavor" },
    });
  }
  checkMax("timeout", overrides.timeoutS, limits.maxExecutionTimeS, "s");
  checkMax("memory", overrides.memoryMb, limits.maxMemoryMb, "MB");
  return {
    flavor: flavorName,
    timeoutMs: Math.round((overrides.timeoutS ?? defaultTimeoutS(limits)) * 1000),
    memoryMb: overrides.memoryMb ?? Math.min(flavor.memoryMb, limits.maxMemoryMb),
    cpus: Math.min(flavor.cpus, limits.maxCpus),
    processes: Math.min(flavor.processes, limits.maxProcesses),
    fileSizeBytes: limits.maxFileSizeMb * 1024 * 1024,
    workspaceBytes: limits.maxWorkspaceMb * 1024 * 1024,
    openFiles: limits.maxOpenFiles,
    outputCapBytes: limits.outputCapBytes,
    displayBytes: limits.maxOutputSize,
  };
}

/** Key of the resources a sandbox is started with; pooled sandboxes serve only calls with the same key. */
export function sandboxShapeKey(limits: ResolvedLimits): string {
  return `${limits.memoryMb}/${limits.cpus}/${limits.processes}/${limits.fileSizeBytes}/${limits.workspaceBytes}/${limits.openFiles}`;
}
