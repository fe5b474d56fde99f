#!/usr/bin/env node
// The `sandgate` binary: runs `main` (run.ts) against this process's streams, environment and
// working directory, and sets the exit status; a reader that goes away early (`| head`) is no error.

import type { CliIo } from "./io.js";
import { main } from "./run.js";

// `sandgate doctor | head`: a reader that goes away early is not an error worth a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

const io: CliIo = {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
  // An interrupted `exec` stops its sandbox, then the process ends with 130.
  onInterrupt: (cleanup) => {
    const stop = (): void => void cleanup().finally(() => process.exit(130));
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    return () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
    };
  },
};

// The command's own promise keeps the process alive: a step that holds no handle of its own (wasm
// compilation, an unref'd analysis worker ending) must not let Node exit 0 before the command is done.
const running = setInterval(() => undefined, 1 << 30);

void main(process.argv.slice(2), io).then((code) => {
  clearInterval(running);
  process.exitCode = code;
});
