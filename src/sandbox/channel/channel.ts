// The runner channel: how the host starts a run in a sandbox's resident runner and hears back
// from it (ready, results, upstream calls), whatever the wire. One file per variant beside this.

import type { Readable, Writable } from "node:stream";
import type { ExecuteFrame, ImageFrame, ResultFrame } from "../protocol.js";
import type { UpstreamCallReply } from "../upstream-calls.js";

export type { ChannelKind } from "../../languages/index.js";

/** The sandbox's fd 3: run requests (and, on the frames channel, replies) to the runner. */
export const TO_RUNNER_FD = 3;
/** The sandbox's fd 4: frames from the runner (ready, result, and on the frames channel, calls). */
export const FROM_RUNNER_FD = 4;

/** One run as the runner gets it: what the frames channel sends as an `execute` frame. */
export type RunMessage = Omit<ExecuteFrame, "type">;

/** An upstream call as the runner sent it, not yet checked. */
export interface ChannelCall {
  /** The run the runner says made the call (frames only; a call without one is taken as the current run's). */
  runId?: string;
  tool: unknown;
  args: unknown;
  /** Set for a call of one of sandgate's operations (its id) or `return` instead of a tool call; not yet checked. */
  op?: unknown;
}

/** What a channel reports to its sandbox. */
export interface ChannelEvents {
  /** The runner can take work; `pid` is its pid in the sandbox's pid namespace. */
  ready(pid: number): void;
  /** A run's result, as the runner said it; its id is checked by the receiver. */
  result(frame: ResultFrame): void;
  /** An image the run returns, not yet checked; its run id is checked by the receiver. */
  image(frame: ImageFrame): void;
  /** An upstream call made by code in the sandbox; `reply` answers it on the channel's own wire. */
  call(call: ChannelCall, reply: (reply: UpstreamCallReply) => void): void;
  /** The runner broke the protocol; `message` says how. The sandbox must be stopped. */
  protocolError(message: string): void;
  /** The runner left more replies unread than a program that awaits its calls ever would. */
  unreadReplies(bytes: number, count: number): void;
}

/** The sandbox's pipes by fd number, as the spawned bubblewrap has them. */
export type ChannelFds = ReadonlyArray<Readable | Writable | null | undefined>;

export interface RunnerChannel {
  /** Starts one run: sends it in the runner's own encoding. */
  send(run: RunMessage): void;
  /** The sandbox's pipes have closed: pending work of the channel (paused reads) is dropped. */
  close(): void;
}

export interface ChannelVariant {
  /** Sandbox fds the channel needs as pipes besides 3 and 4 (the Bash tool pipe: 6 and 7). */
  extraFds: readonly number[];
  /** `runnerExited`: the runner's process is gone (what is left in its pipes is read at full speed). */
  open(fds: ChannelFds, events: ChannelEvents, runnerExited: () => boolean): RunnerChannel;
}

/** A pipe of `fds` that the spawn must have made. */
export function pipeAt<T extends Readable | Writable>(fds: ChannelFds, fd: number): T {
  const pipe = fds[fd];
  if (!pipe) throw new Error(`the sandbox has no pipe at fd ${fd}`);
  return pipe as T;
}
