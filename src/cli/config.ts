// `sandgate config`: the effective configuration with secrets masked, or the JSON Schema of
// sandgate.json (for editors: put its path in the file's "$schema").

import { configJsonSchema, maskSecrets, type SandgateConfig } from "../config/index.js";
import type { CliIo } from "./io.js";

export function runConfig(mode: "print" | "schema", config: SandgateConfig | undefined, source: string | undefined, io: CliIo): number {
  if (mode === "schema") {
    io.stdout.write(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
    return 0;
  }
  if (!config) return 2;
  io.stderr.write(`# effective configuration: defaults${source ? `, then ${source}` : ""}, then the environment\n`);
  io.stdout.write(`${JSON.stringify(maskSecrets(config), null, 2)}\n`);
  return 0;
}
