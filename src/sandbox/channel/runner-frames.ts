// Reading fd 4, where every runner sends its frames (ready, results, and on the frames channel
// upstream calls; images): decoded, schema-checked, and charged to the sandbox's send budget.

import type { Readable } from "node:stream";
import { FrameDecoder, type CallFrame, type ToolCallFrame } from "../protocol.js";
import type { PipeThrottle } from "../runner-budget.js";
import type { ChannelEvents } from "./channel.js";

/** Feeds every frame read from `pipe` to `events`; `tool_call` and `call` frames go to `onCall`. */
export function readRunnerFrames(pipe: Readable, throttle: PipeThrottle, events: ChannelEvents, onCall: (frame: ToolCallFrame | CallFrame) => void): void {
  const decoder = new FrameDecoder();
  pipe.on("data", (chunk: Buffer) => {
    // Parsing and checking what arrived is charged as time: its cost depends on its shape, not its bytes.
    const began = performance.now();
    let frames;
    try {
      frames = decoder.push(chunk);
    } catch (error) {
      events.protocolError((error as Error).message);
      throttle.charge(pipe, chunk.length, 0, performance.now() - began);
      return;
    }
    for (const frame of frames) {
      if (frame.type === "ready") events.ready(frame.pid);
      else if (frame.type === "tool_call" || frame.type === "call") onCall(frame);
      else if (frame.type === "image") events.image(frame);
      else events.result(frame);
    }
    throttle.charge(pipe, chunk.length, frames.length, performance.now() - began);
  });
}
