// The Bash pipe channel: the Bash runner cannot parse JSON, so a run goes out on fd 3 as a header
// line and NUL-terminated code, and upstream calls (sandgate-tool) use a pipe pair of their own.

import type { Readable, Writable } from "node:stream";
import { PipeThrottle } from "../runner-budget.js";
import { FROM_RUNNER_FD, pipeAt, TO_RUNNER_FD, type ChannelEvents, type ChannelFds, type ChannelVariant, type RunMessage, type RunnerChannel } from "./channel.js";
import { readRunnerFrames } from "./runner-frames.js";
import { openToolPipe } from "./tool-pipe.js";

/**
 * `<id> <marker> <n> <keep>\n` (keep: 1 to keep the processes the call leaves), n `NAME=value\0` environment variables, then `<code>\0`: the marker holds
 * no whitespace or NUL, and neither bash code nor env values contain NUL (the request check refuses it).
 */
export function encodeBashRun(run: RunMessage): Buffer {
  const env = Object.entries(run.env ?? {});
  return Buffer.from(`${run.id} ${run.marker} ${env.length} ${run.keepProcesses ? 1 : 0}\n${env.map(([name, value]) => `${name}=${value}\u0000`).join("")}${run.code}\u0000`, "utf8");
}

class BashPipeChannel implements RunnerChannel {
  private readonly toRunner: Writable;
  private readonly throttle: PipeThrottle;

  constructor(
    fds: ChannelFds,
    events: ChannelEvents,
    runnerExited: () => boolean,
  ) {
    this.toRunner = pipeAt<Writable>(fds, TO_RUNNER_FD);
    this.throttle = new PipeThrottle(runnerExited);
    this.toRunner.on("error", () => {
      // EPIPE when the runner died; the sandbox's exit handler reports it.
    });
    // The runner's frames are `ready` and `result` only. A `tool_call` frame is user code writing to
    // the runner's copy of fd 4: a frame in reply would land in the runner's request stream on
    // fd 3 and wreck the next run, so it is not answered.
    readRunnerFrames(pipeAt<Readable>(fds, FROM_RUNNER_FD), this.throttle, events, () => undefined);
    openToolPipe(fds, events, this.throttle);
  }

  send(run: RunMessage): void {
    this.toRunner.write(encodeBashRun(run));
  }

  close(): void {
    this.throttle.end();
  }
}

export const BASH_PIPE_CHANNEL: ChannelVariant = {
  extraFds: [],
  open: (fds, events, runnerExited) => new BashPipeChannel(fds, events, runnerExited),
};
