// Secrets in the configuration, masked for display (`sandgate config --print`, logs).

import type { SandgateConfig } from "./schema.js";

export const SECRET_MASK = "********";

/** A copy of `config` that is safe to print: every secret value replaced by a mask. */
export function maskSecrets(config: SandgateConfig): SandgateConfig {
  return {
    ...config,
    server: { ...config.server, ...(config.server.apiKey === undefined ? {} : { apiKey: SECRET_MASK }), apiKeys: maskValues(config.server.apiKeys) },
    mcpServers: Object.fromEntries(
      Object.entries(config.mcpServers).map(([name, server]) => [
        name,
        "command" in server ? { ...server, env: maskValues(server.env) } : { ...server, headers: maskValues(server.headers) },
      ]),
    ),
  };
}

/**
 * The values of the upstream servers' env and headers (credentials), longest first so that one
 * containing another is masked whole. Values under 4 characters are left out: masking every
 * "1" or "on" in a text would hide more than it protects.
 */
export function upstreamSecretValues(config: SandgateConfig): string[] {
  return Object.values(config.mcpServers)
    .flatMap((server) => Object.values("command" in server ? server.env : server.headers))
    .filter((value) => value.length >= 4)
    .sort((a, b) => b.length - a.length);
}

function maskValues(map: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(map).map((key) => [key, SECRET_MASK]));
}
