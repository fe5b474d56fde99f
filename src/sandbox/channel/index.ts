// The runner channels by kind, for the sandbox: which one a runner speaks is its spec's `channel`
// (src/languages/). Keyed by ChannelKind, so a new kind without a channel fails to compile.

import { BASH_PIPE_CHANNEL } from "./bash-pipe.js";
import type { ChannelKind, ChannelVariant } from "./channel.js";
import { FRAMES_CHANNEL } from "./frames.js";

export const CHANNELS: Record<ChannelKind, ChannelVariant> = {
  frames: FRAMES_CHANNEL,
  "bash-pipe": BASH_PIPE_CHANNEL,
};

export { FROM_RUNNER_FD, TO_RUNNER_FD } from "./channel.js";
export type { ChannelCall, ChannelEvents, ChannelFds, ChannelKind, ChannelVariant, RunMessage, RunnerChannel } from "./channel.js";
