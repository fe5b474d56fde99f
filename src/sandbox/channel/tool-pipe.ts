// The tool pipe of every sandbox: sandgate-tool's requests (`<callId> <tool>\n<args>\0`) in, replies out,
// on the FIFO pair the launcher made (fds 6 and 7 of the channel's table); wire format in docs/runner-protocol.md.

import type { Readable, Writable } from "node:stream";
import { ReplyPipe, type PipeThrottle } from "../runner-budget.js";
import { BashUpstreamRequestDecoder, encodeBashUpstreamReply, parseBashArgs, upstreamCallError, type BashUpstreamRequest, type UpstreamCallReply } from "../upstream-calls.js";
import type { ChannelEvents, ChannelFds } from "./channel.js";

/** Indexes of the channel's fd table holding the host's ends of the FIFOs: replies to sandgate-tool, its requests. */
export const TOOL_REPLIES_FD = 6;
export const TOOL_REQUESTS_FD = 7;

/** Serves sandgate-tool on the tool pipe when `fds` has one; requests are charged to the channel's throttle. */
export function openToolPipe(fds: ChannelFds, events: ChannelEvents, throttle: PipeThrottle): void {
  const repliesPipe = fds[TOOL_REPLIES_FD] as Writable | null | undefined;
  const requests = fds[TOOL_REQUESTS_FD] as Readable | null | undefined;
  if (!repliesPipe || !requests) return;
  // Capped: a sandbox that does not read its replies is stopped.
  const replies = new ReplyPipe(repliesPipe, (bytes, count) => events.unreadReplies(bytes, count));
  repliesPipe.on("error", () => {
    // the sandbox is gone; its exit handler reports it
  });
  requests.on("error", () => {
    // destroyed with the sandbox
  });
  const decoder = new BashUpstreamRequestDecoder();
  requests.on("data", (chunk: Buffer) => {
    const began = performance.now();
    const received = decoder.push(chunk);
    for (const request of received) onRequest(request, events, (answer) => replies.write(encodeBashUpstreamReply(request.callId, answer)));
    throttle.charge(requests, chunk.length, received.length, performance.now() - began);
  });
}

function onRequest(request: BashUpstreamRequest, events: ChannelEvents, reply: (answer: UpstreamCallReply) => void): void {
  // `:<operation id>` (one of sandgate's operations) and `:return` (content for the agent): a tool id starts with a server name, never with ':'.
  const op = request.tool.startsWith(":") ? request.tool.slice(1) : undefined;
  const args = parseBashArgs(request.argsText, op === "return" ? "the content is not valid JSON" : "the arguments are not valid JSON");
  if (!args.ok) {
    // sandgate-tool prints it after "tool `x.y` failed: " or "--return failed: ": the message names no tool again.
    reply(upstreamCallError("InvalidArguments", args.message));
    return;
  }
  events.call(op === undefined ? { tool: request.tool, args: args.args } : { tool: undefined, op, args: args.args }, reply);
}
