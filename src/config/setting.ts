// One setting declared once: its zod type, default, environment variable and description.
// The schema, defaultConfig, env parsing, the JSON Schema and the README table all read these.

import type { z } from "zod";
import { codecFor, type EnvCodec } from "./env-codecs.js";

/** A default that cannot be written down (it depends on the host) is computed and stated in words. */
type DefaultOf<T> =
  | { default: T; defaultDoc?: string }
  | { default: () => T; defaultDoc: string }
  | (undefined extends T ? { default?: undefined; defaultDoc?: string } : never);

/** What `setting()` takes besides the zod type. */
export type SettingDeclaration<T> = {
  /** What the setting means, in one or two sentences; the JSON Schema and the README say this. */
  doc: string;
  /** The environment variable that overrides it, if any. */
  env?: string;
  /** How the variable's text becomes a value; derived from the zod type when not given. */
  codec?: EnvCodec<T>;
} & DefaultOf<T>;

/** A declared setting as the walkers see it. */
export interface Setting {
  doc: string;
  /** The text of the zod `.describe()`: doc, then the variable and a computed default in parentheses. */
  description: string;
  env?: string;
  codec?: EnvCodec<unknown>;
  default?: unknown;
  defaultDoc?: string;
}

const declared = new WeakMap<z.ZodTypeAny, Setting>();

/**
 * Declares `schema` as one setting: describes it, and records its default, variable and codec
 * for defaultConfig(), applyEnv(), the JSON Schema and the README's settings table.
 */
export function setting<S extends z.ZodTypeAny>(schema: S, declaration: SettingDeclaration<z.output<S>>): S {
  const { doc, env, defaultDoc } = declaration;
  const notes = [env, defaultDoc === undefined ? undefined : `default ${defaultDoc}`].filter((n) => n !== undefined);
  const description = notes.length === 0 ? doc : `${doc} (${notes.join("; ")})`;
  const described = schema.describe(description);
  const codec = declaration.codec ?? (env === undefined ? undefined : codecFor(schema));
  declared.set(described, {
    doc,
    description,
    ...(env === undefined ? {} : { env }),
    ...(codec === undefined ? {} : { codec }),
    ...("default" in declaration && declaration.default !== undefined ? { default: declaration.default } : {}),
    ...(defaultDoc === undefined ? {} : { defaultDoc }),
  });
  return described;
}

/** The declaration of `schema` when it was made by setting(). */
export function settingOf(schema: z.ZodTypeAny): Setting | undefined {
  return declared.get(schema);
}

/** The setting's default: computed now when it depends on the host, a fresh copy otherwise. */
export function defaultValue(setting: Setting): unknown {
  return typeof setting.default === "function" ? (setting.default as () => unknown)() : structuredClone(setting.default);
}
