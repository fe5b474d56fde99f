// What a CLI command reads and writes instead of the process: its streams, its environment and its
// working directory, so `main` runs the same in the `sandgate` binary and inside a test.

import { isAbsolute, resolve } from "node:path";
import type { Writable } from "node:stream";

export interface CliIo {
  /** Results; in `stdio` mode only MCP messages. */
  stdout: Writable;
  /** Errors, progress, logs. */
  stderr: Writable;
  /** Code or text piped in; isTTY when a person sits at it (then nothing is read). */
  stdin: AsyncIterable<Buffer | string> & { readonly isTTY?: boolean };
  /** The variables the command reads (config, SANDGATE_CONFIG, installers' proxies): never anything else. */
  env: Record<string, string | undefined>;
  /** Where ./sandgate.json and relative paths (-f FILE, --images DIR, --find-links DIR) are found. */
  cwd: string;
  /**
   * Asks for `cleanup` to run when the command is interrupted (SIGINT, SIGTERM in the binary, which then
   * exits 130); returns the call that withdraws it. Absent in process: nothing interrupts a test's command.
   */
  onInterrupt?: (cleanup: () => Promise<unknown>) => () => void;
}

/** `path` as the command opens it: relative paths are taken from the command's working directory; "" stays "" (refused as no name). */
export function inCwd(io: Pick<CliIo, "cwd">, path: string): string {
  return path === "" || isAbsolute(path) ? path : resolve(io.cwd, path);
}

