// How an environment variable's text becomes a setting's value, one codec per kind of setting
// (number, boolean, enum, string, comma-separated list; the pool and API key formats). A
// malformed value fails with CONFIG_INVALID naming the variable.

import { z } from "zod";
import { SandgateError } from "../errors/index.js";
import { RUNNER_KINDS, type RunnerKind } from "../languages/names.js";

export interface EnvCodec<T> {
  /** Kind of text the variable holds, for tests and messages. */
  kind: "number" | "integer" | "boolean" | "enum" | "string" | "list" | "custom";
  /** What the settings table says about the format, e.g. "comma-separated". */
  format?: string;
  /** The value of the variable's (trimmed, non-empty) text; `current` is the value it replaces. */
  parse(raw: string, current: T | undefined, variable: string): T;
  /** `value` written as the variable would hold it. */
  show(value: T): string;
  /** A valid text for the variable that gives a value other than `current` (tests set every variable with it). */
  example(current: T | undefined): string;
}

function invalid(variable: string, raw: string, what: string): SandgateError {
  return new SandgateError("CONFIG_INVALID", `environment variable ${variable}=${JSON.stringify(raw)} ${what}`, { data: { variable } });
}

/** "a, b or c" */
function orList(items: readonly string[]): string {
  return items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)!}`;
}

function numberCodec(schema: z.ZodNumber): EnvCodec<number> {
  const integer = schema.isInt;
  return {
    kind: integer ? "integer" : "number",
    parse(raw, _current, variable) {
      const value = Number(raw);
      if (!Number.isFinite(value)) throw invalid(variable, raw, "is not a number");
      if (integer && !Number.isInteger(value)) throw invalid(variable, raw, "is not a whole number");
      return value;
    },
    show: String,
    example(current) {
      if (current === undefined) return String(Math.max(1, schema.minValue ?? 1));
      const max = schema.maxValue;
      return String(max !== null && current + 1 > max ? current - 1 : current + 1);
    },
  };
}

const TRUE = ["1", "true", "yes", "on"];
const FALSE = ["0", "false", "no", "off"];

const booleanCodec: EnvCodec<boolean> = {
  kind: "boolean",
  format: "`true` or `false`",
  parse(raw, _current, variable) {
    const word = raw.toLowerCase();
    if (TRUE.includes(word)) return true;
    if (FALSE.includes(word)) return false;
    throw invalid(variable, raw, "is not a boolean (use true or false)");
  },
  show: String,
  example: (current) => String(current !== true),
};

function enumCodec(options: readonly string[]): EnvCodec<string> {
  return {
    kind: "enum",
    format: orList(options.map((o) => `\`${o}\``)),
    parse(raw, _current, variable) {
      if (!options.includes(raw)) throw invalid(variable, raw, `is not one of ${orList(options)}`);
      return raw;
    },
    show: String,
    example: (current) => options.find((o) => o !== current) ?? options[0] ?? "",
  };
}

const EXAMPLE_TEXT = "/srv/sandgate-example-value";

const stringCodec: EnvCodec<string> = {
  kind: "string",
  parse: (raw) => raw,
  show: String,
  example: (current) => (current === EXAMPLE_TEXT ? `${EXAMPLE_TEXT}-2` : EXAMPLE_TEXT),
};

const listCodec: EnvCodec<string[]> = {
  kind: "list",
  format: "comma-separated",
  parse: (raw) => raw.split(",").map((s) => s.trim()).filter(Boolean),
  show: (value) => value.join(","),
  example: (current) => (current?.includes("https://example.test") ? "https://example.test,https://other.example.test" : "https://example.test"),
};

/** Kinds of personal data, comma-separated (`SANDGATE_PII_TYPES=email,phone`). */
export const piiTypesCodec: EnvCodec<string[]> = {
  ...listCodec,
  example: (current) => (current?.length === 1 && current[0] === "email" ? ["email", "iban"] : ["email"]).join(","),
};

/** Looks through optional, described and refined wrappers to the type that holds the value. */
function valueType(schema: z.ZodTypeAny): z.ZodTypeAny {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault) return valueType(schema._def.innerType as z.ZodTypeAny);
  if (schema instanceof z.ZodEffects) return valueType(schema._def.schema as z.ZodTypeAny);
  return schema;
}

/** The codec for a setting of this zod type; a type without one must be declared with its own codec. */
export function codecFor(schema: z.ZodTypeAny): EnvCodec<unknown> {
  const type = valueType(schema);
  if (type instanceof z.ZodNumber) return numberCodec(type);
  if (type instanceof z.ZodBoolean) return booleanCodec;
  if (type instanceof z.ZodEnum) return enumCodec(type.options as string[]);
  if (type instanceof z.ZodString) return stringCodec;
  if (type instanceof z.ZodArray && valueType(type.element as z.ZodTypeAny) instanceof z.ZodString) return listCodec;
  throw new Error(`no environment codec for a ${type.constructor.name}; declare the setting with its own codec`);
}

/** SANDGATE_POOL="python=2,javascript=1": warm sandboxes per runner; runners not named keep their count. */
export const poolCodec: EnvCodec<Record<RunnerKind, number>> = {
  kind: "custom",
  format: `\`${RUNNER_KINDS.map((k) => `${k}=N`).join(",")}\`, any of them`,
  parse(raw, current, variable) {
    const pool = { ...current } as Record<RunnerKind, number>;
    for (const part of raw.split(",")) {
      const [name, count] = part.split("=").map((s) => s.trim());
      const kind = RUNNER_KINDS.find((k) => k === name);
      if (kind === undefined || count === undefined || !/^\d+$/.test(count)) {
        throw new SandgateError(
          "CONFIG_INVALID",
          `${variable} entry ${JSON.stringify(part)} is not of the form ${orList(RUNNER_KINDS.map((k) => `${k}=N`))}`,
          { data: { variable } },
        );
      }
      pool[kind] = Number(count);
    }
    return pool;
  },
  show: (value) => RUNNER_KINDS.map((k) => `${k}=${value[k]}`).join(","),
  example: (current) => `${RUNNER_KINDS[0]}=${(current?.[RUNNER_KINDS[0]] ?? 0) + 1}`,
};

/** SANDGATE_API_KEYS="alice:key1,bob:key2": named keys; a key's value never appears in an error. */
export const apiKeysCodec: EnvCodec<Record<string, string>> = {
  kind: "custom",
  format: "`name:key,name:key`",
  parse(raw, _current, variable) {
    const keys: Record<string, string> = {};
    for (const [index, part] of raw.split(",").entries()) {
      const colon = part.indexOf(":");
      const name = colon === -1 ? "" : part.slice(0, colon).trim();
      const key = colon === -1 ? "" : part.slice(colon + 1).trim();
      if (name === "" || key === "" || Object.hasOwn(keys, name)) {
        throw new SandgateError(
          "CONFIG_INVALID",
          `${variable} entry ${index + 1} is not of the form name:key${Object.hasOwn(keys, name) ? ` (the name ${JSON.stringify(name)} appears twice)` : ""}`,
          { data: { variable } },
        );
      }
      keys[name] = key;
    }
    return keys;
  },
  show: (value) => Object.keys(value).map((name) => `${name}:…`).join(","),
  example: () => "example-a:example-key-aaaaaaaaaaaa,example-b:example-key-bbbbbbbbbbbb",
};

/** Scopes per API key name: "name:scope+scope,name:scope". */
export function keyScopesCodec<S extends string>(scopes: readonly S[]): EnvCodec<Record<string, S[]>> {
  return {
    kind: "custom",
    format: "`name:scope+scope,name:scope`",
    parse(raw, _current, variable) {
      const result: Record<string, S[]> = {};
      for (const [index, part] of raw.split(",").entries()) {
        const colon = part.indexOf(":");
        const name = colon === -1 ? "" : part.slice(0, colon).trim();
        const listed = colon === -1 ? [] : part.slice(colon + 1).split("+").map((scope) => scope.trim()).filter((scope) => scope !== "");
        if (name === "" || listed.length === 0 || Object.hasOwn(result, name)) {
          throw new SandgateError("CONFIG_INVALID", `${variable} entry ${index + 1} is not of the form name:scope+scope${Object.hasOwn(result, name) ? ` (the name ${JSON.stringify(name)} appears twice)` : ""}`, {
            data: { variable },
          });
        }
        const unknown = listed.find((scope) => !(scopes as readonly string[]).includes(scope));
        if (unknown !== undefined) throw invalid(variable, raw, `names the scope ${JSON.stringify(unknown)}; scopes are ${orList(scopes)}`);
        result[name] = listed as S[];
      }
      return result;
    },
    show: (value) => Object.entries(value).map(([name, listed]) => `${name}:${listed.join("+")}`).join(","),
    example: () => "example-a:execute+files,example-b:audit",
  };
}
