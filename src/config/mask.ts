// Secrets in the configuration, masked for display (`sandgate config --print`, logs).

import type { SandgateConfig } from "./schema.js";

const MASK = "********";

/** A copy of `config` that is safe to print: every secret value replaced by a mask. */
export function maskSecrets(config: SandgateConfig): SandgateConfig {
  return {
    ...config,
    server: { ...config.server, ...(config.server.apiKey === undefined ? {} : { apiKey: MASK }) },
  };
}
