// The process logger: JSON lines on stderr, never stdout (stdout belongs to the stdio transport).
// "silent" for tests and for one-shot CLI commands.

import { destination, pino, type Logger as PinoLogger } from "pino";

export type Logger = Pick<PinoLogger, "debug" | "info" | "warn" | "error">;

export function createLogger(level = "info"): Logger {
  return pino({ level, base: { name: "sandgate" } }, destination({ fd: 2, sync: false }));
}

export const silentLogger: Logger = pino({ level: "silent" });
