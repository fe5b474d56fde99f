// Resolves the limits of one call: flavor presets, per-call overrides and admin maximums.
// Anything above a maximum is refused with LIMIT_EXCEEDED rather than silently lowered.

import { defaultTimeoutS, FLAVOR_NAMES, type FlavorName, type SandgateConfig } from "../config/index.js";
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

/** A flavor as this server runs it: its preset capped by the admin maximums. */
export interface EffectiveFlavor {
  name: FlavorName;
  memoryMb: number;
  cpus: number;
  processes: number;
  /** The configured memoryMb, when limits.maxMemoryMb lowered it. */
  cappedFromMb?: number;
}

/** Every configured flavor as calls get it, smallest memory first; what policy, descriptions and hints show. */
export function effectiveFlavors(config: SandgateConfig): EffectiveFlavor[] {
  const { limits } = config;
  const flavors: EffectiveFlavor[] = [];
  for (const name of FLAVOR_NAMES) {
    const flavor = config.flavors[name];
    if (!flavor) continue;
    const memoryMb = Math.min(flavor.memoryMb, limits.maxMemoryMb);
    flavors.push({
      name,
      memoryMb,
      cpus: Math.min(flavor.cpus, limits.maxCpus),
      processes: Math.min(flavor.processes, limits.maxProcesses),
      ...(memoryMb < flavor.memoryMb ? { cappedFromMb: flavor.memoryMb } : {}),
    });
  }
  return flavors.sort((a, b) => a.memoryMb - b.memoryMb);
}

/** "small 1024 MB, medium 2048 MB (default), large 4096 MB": the flavors as one phrase. */
export function describeFlavors(config: SandgateConfig): string {
  return effectiveFlavors(config)
    .map((f) => `${f.name} ${f.memoryMb} MB${f.name === config.defaultFlavor ? " (default)" : ""}`)
    .join(", ");
}

export function resolveLimits(config: SandgateConfig, overrides: LimitOverrides = {}): ResolvedLimits {
  const { limits } = config;
  const flavorName = overrides.flavor ?? config.defaultFlavor;
  const flavor = effectiveFlavors(config).find((f) => f.name === flavorName);
  if (!flavor) {
    throw new SandgateError("INVALID_INPUT", `unknown flavor ${JSON.stringify(flavorName)}; this server has ${describeFlavors(config)}`, {
      data: { field: "flavor" },
    });
  }
  checkMax("timeout", overrides.timeoutS, limits.maxExecutionTimeS, "s");
  checkMax("memory", overrides.memoryMb, limits.maxMemoryMb, "MB");
  return {
    flavor: flavorName,
    timeoutMs: Math.round((overrides.timeoutS ?? defaultTimeoutS(limits)) * 1000),
    memoryMb: overrides.memoryMb ?? flavor.memoryMb,
    cpus: flavor.cpus,
    processes: flavor.processes,
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
