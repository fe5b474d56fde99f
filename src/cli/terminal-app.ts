// The sandgate a one-shot command builds for itself (`sandgate exec`, `sandgate call`): no warm pool,
// upstream servers only when configured, analysis and the code policy as on a server, nobody to
// approve (what needs approval is refused at once), and no audit log or observers.

import { createApp, type App } from "../app/index.js";
import type { SandgateConfig } from "../config/index.js";
import { refusingBroker } from "../features/governance/index.js";
import { RUNNER_KINDS, type RunnerKind } from "../languages/index.js";
import { createLogger } from "../util/logger.js";
import type { CliIo } from "./io.js";

/** `refusal` says why nobody can approve here and where one could; `version` is what the app reports (status.root). */
export function terminalApp(config: SandgateConfig, io: Pick<CliIo, "stderr">, refusal: string, version?: string): App {
  return createApp(config, {
    ...(version !== undefined ? { version } : {}),
    pool: Object.fromEntries(RUNNER_KINDS.map((kind) => [kind, 0])) as Record<RunnerKind, number>,
    log: createLogger(config.logLevel, io.stderr),
    approvals: refusingBroker(refusal),
    governed: config.security.enabled,
    upstream: Object.keys(config.mcpServers).length > 0,
    audit: false,
    warmAnalyzer: false,
    observe: false,
  });
}
