// The declared settings, walked out of the config schema: every setting's defaults
// (defaultConfig) and environment variables (applyEnv) come from its one setting() declaration.

import { z } from "zod";
import type { EnvCodec } from "./env-codecs.js";
import { configSchema, type SandgateConfig } from "./schema.js";
import { defaultValue, settingOf, type Setting } from "./setting.js";

type Env = Record<string, string | undefined>;

/** One declared setting and where it sits in the configuration. */
export interface DeclaredSetting extends Setting {
  /** Its config key, dotted: "limits.maxMemoryMb". */
  key: string;
  path: readonly string[];
}

/** A declared setting that an environment variable overrides. */
export interface EnvSetting extends DeclaredSetting {
  env: string;
  codec: EnvCodec<unknown>;
}

/** The variable naming the config file: read before any setting, so it is no setting itself. */
export const CONFIG_FILE_VARIABLE = {
  env: "SANDGATE_CONFIG",
  doc: "The config file to read (sandgate.json format); `--config FILE` wins over it",
  defaultDoc: "./sandgate.json if present",
} as const;

/** The object type inside optional, described and refined wrappers, if it is one. */
function objectInside(schema: z.ZodTypeAny): z.AnyZodObject | undefined {
  if (schema instanceof z.ZodObject) return schema;
  if (schema instanceof z.ZodEffects) return objectInside(schema._def.schema as z.ZodTypeAny);
  if (schema instanceof z.ZodOptional) return objectInside(schema._def.innerType as z.ZodTypeAny);
  return undefined;
}

function walk(schema: z.ZodTypeAny, path: string[], out: DeclaredSetting[]): void {
  const declared = settingOf(schema);
  if (declared) {
    out.push({ ...declared, key: path.join("."), path });
    return;
  }
  const object = objectInside(schema);
  // A bug, not a user error: every leaf of the schema is declared with setting().
  if (!object) throw new Error(`config key ${path.join(".")} is not declared with setting()`);
  for (const [name, child] of Object.entries(object.shape as z.ZodRawShape)) walk(child, [...path, name], out);
}

let cached: readonly DeclaredSetting[] | undefined;

/** Every declared setting in schema order. */
export function declaredSettings(): readonly DeclaredSetting[] {
  if (!cached) {
    const out: DeclaredSetting[] = [];
    walk(configSchema, [], out);
    cached = out;
  }
  return cached;
}

/** The settings an environment variable overrides, in schema order. */
export function envSettings(): EnvSetting[] {
  return declaredSettings().filter((s): s is EnvSetting => s.env !== undefined && s.codec !== undefined);
}

function defaultsOf(schema: z.ZodTypeAny): unknown {
  const declared = settingOf(schema);
  if (declared) return defaultValue(declared);
  const object = objectInside(schema);
  if (!object) return undefined;
  const out: Record<string, unknown> = {};
  for (const [name, child] of Object.entries(object.shape as z.ZodRawShape)) {
    const value = defaultsOf(child);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** Every setting at its default; computed ones (SANDBOX_DIR, maxSandboxes, ...) are computed now. */
export function defaultConfig(): SandgateConfig {
  declaredSettings(); // a leaf without a declaration fails here, loudly, not as a missing default
  return defaultsOf(configSchema) as SandgateConfig;
}

function setAt(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const name of path.slice(0, -1)) {
    const next = node[name];
    node = typeof next === "object" && next !== null ? (next as Record<string, unknown>) : (node[name] = {});
  }
  node[path.at(-1)!] = value;
}

function getAt(source: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((node, name) => (typeof node === "object" && node !== null ? (node as Record<string, unknown>)[name] : undefined), source);
}

/** The trimmed text of a variable, or undefined when it is unset or blank (blank leaves the setting alone). */
export function envText(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw ? raw : undefined;
}

/** Applies the environment variables that are set on top of `base`; unset ones leave it alone. */
export function applyEnv(base: SandgateConfig, env: Env): SandgateConfig {
  const out = structuredClone(base) as unknown as Record<string, unknown>;
  for (const setting of envSettings()) {
    const raw = envText(env, setting.env);
    if (raw !== undefined) setAt(out, setting.path, setting.codec.parse(raw, getAt(out, setting.path), setting.env));
  }
  return out as unknown as SandgateConfig;
}

/** The set variable that decides config key `key` (or an enclosing setting of it), if any. */
export function variableFor(key: string, env: Env): string | undefined {
  const setting = envSettings().find((s) => key === s.key || key.startsWith(`${s.key}.`));
  return setting && envText(env, setting.env) !== undefined ? setting.env : undefined;
}
