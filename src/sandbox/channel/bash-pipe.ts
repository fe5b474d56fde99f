// The Bash pipe channel: the Bash runner cannot parse JSON, so a run goes out on fd 3 as a header
// line and NUL-terminated code, and upstream calls (sandgate-tool) use a pipe pair of their own.

import type { Readable, Writable } from "node:stream";
import { PipeThrottle, ReplyPipe } from "../runner-budget.js";
import { BashUpstreamRequestDecoder, encodeBashUpstreamReply, parseBashArgs, upstreamCallError, type BashUpstreamRequest, type UpstreamCallReply } from "../upstream-calls.js";
import { FROM_RUNNER_FD, pipeAt, TO_RUNNER_FD, type ChannelEvents, type ChannelFds, type ChannelVariant, type RunMessage, type RunnerChannel } from "./channel.js";
import { readRunnerFrames } from "./runner-frames.js";

/** fd 6: replies to sandgate-tool; fd 7: its requests (runners/bash_lib.sh moves them out of user code's way). */
const TOOL_REPLIES_FD = 6;
const TOOL_REQUESTS_FD = 7;

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
  /** Replies to sandgate-tool, capped: a sandbox that does not read them is stopped. */
  private readonly replies: ReplyPipe;
  private readonly requests = new BashUpstreamRequestDecoder();
  private readonly throttle: PipeThrottle;

  constructor(
    fds: ChannelFds,
    private readonly events: ChannelEvents,
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
    const replies = pipeAt<Writable>(fds, TOOL_REPLIES_FD);
    this.replies = new ReplyPipe(replies, (bytes, count) => events.unreadReplies(bytes, count));
    replies.on("error", () => {
      // the sandbox is gone; its exit handler reports it
    });
    const requests = pipeAt<Readable>(fds, TOOL_REQUESTS_FD);
    requests.on("data", (chunk: Buffer) => {
      const received = this.requests.push(chunk);
      for (const request of received) this.onRequest(request);
      this.throttle.charge(requests, chunk.length, received.length);
    });
  }

  send(run: RunMessage): void {
    this.toRunner.write(encodeBashRun(run));
  }

  close(): void {
    this.throttle.end();
  }

  private onRequest(request: BashUpstreamRequest): void {
    const reply = (answer: UpstreamCallReply): void => {
      this.replies.write(encodeBashUpstreamReply(request.callId, answer));
    };
    // `:search`, `:servers` (discovery) and `:return` (content for the agent): a tool id starts with a server name, never with ':'.
    const op = request.tool.startsWith(":") ? request.tool.slice(1) : undefined;
    const args = parseBashArgs(request.argsText);
    if (!args.ok) {
      reply(upstreamCallError("InvalidArguments", `${op === undefined ? `tool \`${request.tool.slice(0, 100)}\`` : (op === "search" ? "search_tools" : `sandgate-tool --${op.slice(0, 20)}`)} refused: ${args.message}`));
      return;
    }
    this.events.call(op === undefined ? { tool: request.tool, args: args.args } : { tool: undefined, op, args: args.args }, reply);
  }
}

export const BASH_PIPE_CHANNEL: ChannelVariant = {
  extraFds: [TOOL_REPLIES_FD, TOOL_REQUESTS_FD],
  open: (fds, events, runnerExited) => new BashPipeChannel(fds, events, runnerExited),
};
