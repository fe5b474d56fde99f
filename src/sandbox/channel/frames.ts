// The frames channel (Python and Node runners): runs go out as `execute` frames on fd 3, and
// upstream calls come in as `tool_call` (and operation calls as `call`) frames on fd 4 and are answered with frames on fd 3.

import type { Readable, Writable } from "node:stream";
import { encodeFrame } from "../protocol.js";
import { PipeThrottle, ReplyPipe } from "../runner-budget.js";
import { encodeToolResultFrame } from "../upstream-calls.js";
import { FROM_RUNNER_FD, pipeAt, TO_RUNNER_FD, type ChannelEvents, type ChannelFds, type ChannelVariant, type RunMessage, type RunnerChannel } from "./channel.js";
import { readRunnerFrames } from "./runner-frames.js";
import { openToolPipe } from "./tool-pipe.js";

class FramesChannel implements RunnerChannel {
  private readonly toRunner: Writable;
  /** Replies to fd 3, capped: a runner that does not read them is stopped. */
  private readonly replies: ReplyPipe;
  private readonly throttle: PipeThrottle;

  constructor(fds: ChannelFds, events: ChannelEvents, runnerExited: () => boolean) {
    this.toRunner = pipeAt<Writable>(fds, TO_RUNNER_FD);
    this.throttle = new PipeThrottle(runnerExited);
    this.replies = new ReplyPipe(this.toRunner, (bytes, count) => events.unreadReplies(bytes, count));
    this.toRunner.on("error", () => {
      // EPIPE when the runner died; the sandbox's exit handler reports it.
    });
    readRunnerFrames(pipeAt<Readable>(fds, FROM_RUNNER_FD), this.throttle, events, (frame) => {
      const call = {
        ...(frame.id === undefined ? {} : { runId: frame.id }),
        ...(frame.type === "call" ? { tool: undefined, op: frame.op } : { tool: frame.tool }),
        args: frame.args,
      };
      events.call(call, (reply) => this.replies.write(encodeToolResultFrame(frame.callId, reply)));
    });    // sandgate-tool works here too (a Python or Node program may run it); it speaks the Bash wire on the tool pipe.
    openToolPipe(fds, events, this.throttle);
  }

  send(run: RunMessage): void {
    this.toRunner.write(encodeFrame({ type: "execute", ...run }));
  }

  close(): void {
    this.throttle.end();
  }
}

export const FRAMES_CHANNEL: ChannelVariant = {
  extraFds: [],
  open: (fds, events, runnerExited) => new FramesChannel(fds, events, runnerExited),
};
