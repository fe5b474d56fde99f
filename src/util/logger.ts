// The process logger: JSON lines on stderr, never stdout (stdout belongs to the stdio transport).
// "silent" for tests and for one-shot CLI commands.

import { destination, pino, type DestinationStream, type Logger as PinoLogger } from "pino";

export type Logger = Pick<PinoLogger, "debug" | "info" | "warn" | "error">;

/** JSON lines to `stream` (a CLI command's stderr), else to fd 2. */
export function createLogger(level = "info", stream?: DestinationStream): Logger {
  return pino({ level, base: { name: "sandgate" } }, stream ?? destination({ fd: 2, sync: false }));
}

export const silentLogger: Logger = pino({ level: "silent" });
