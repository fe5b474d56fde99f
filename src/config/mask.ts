// Secrets in the configuration, masked for display (`sandgate config --print`, logs).

import type { SandgateConfig } from "./schema.js";

const MASK = "********";

/** A copy of `config` that is safe to print: every secret value replaced by a mask. */
export function maskSecrets(config: SandgateConfig): SandgateConfig {
  return {
    ...config,
    server: { ...config.server, ...(config.server.apiKey === undefined ? {} : { apiKey: MASK }) },
    mcpServers: Object.fromEntries(
      Object.entries(config.mcpServers).map(([name, server]) => [
        name,
        "command" in server ? { ...server, env: maskValues(server.env) } : { ...server, headers: maskValues(server.headers) },
      ]),
    ),
  };
}

function maskValues(map: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(map).map((key) => [key, MASK]));
}
