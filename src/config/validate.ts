// Schema validation of a whole configuration, with one error that names the key and source.

import { SandgateError } from "../errors/index.js";
import { configSchema, type SandgateConfig } from "./schema.js";

/** Checks a configuration object against the schema, naming the offending key. */
export function validateConfig(candidate: unknown, source: string): SandgateConfig {
  const parsed = configSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    let key = issue?.path.join(".") ?? "";
    let message = issue?.message ?? "invalid";
    if (issue?.code === "unrecognized_keys") {
      key = [...issue.path, issue.keys[0] ?? ""].join(".");
      message = "unknown key (check its spelling against `sandgate config --schema`)";
    }
    throw new SandgateError("CONFIG_INVALID", `invalid configuration (${source}): ${key ? `${key}: ` : ""}${message}`, {
      data: { key, source },
    });
  }
  return parsed.data;
}
