// The framed pipe protocol between the host and a runner (docs/runner-protocol.md):
// 4-byte big-endian length, then UTF-8 JSON. Frames from a runner are untrusted input.

import { z } from "zod";
import { cutTooDeep } from "./frame-depth.js";

/** Largest frame the host sends a runner (a tool result). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;
/**
 * Largest frame a runner may send. Results are small (values are clipped to 64 KiB, tracebacks
 * to 256 KiB), so only upstream-call arguments and images come near it; parsing a frame this size
 * takes the event loop about 100 ms, which is what one sandbox may cost other callers at once.
 * 16 MiB plus room for an image frame's other fields: the largest image limits.maxImageBytes
 * allows (12 MiB) is 16 MiB of base64.
 */
export const MAX_RUNNER_FRAME_BYTES = 16 * 1024 * 1024 + 64 * 1024;

export interface ExecuteFrame {
  type: "execute";
  id: string;
  code: string;
  marker: string;
  filename: string;
  mode?: "script" | "async";
  /** The code as the user wrote it, when the host rewrote it (TypeScript, imports): error headers show its lines. */
  source?: string;
  cpuSeconds?: number;
  /** Processes the call leaves running stay (until the sandbox ends) instead of being killed at its end. */
  keepProcesses?: boolean;
  /** Environment variables for this call only: the runner sets them and takes them back when the call ends. */
  env?: Record<string, string>;
  /** Largest image the host keeps (decoded bytes): the runner names a larger one instead of sending it. */
  maxImageBytes?: number;
  /** The host may interrupt this call with SIGINT (a session's); without it a timeout kills the sandbox. */
  interruptible?: boolean;
}

const errorInfoSchema = z.object({
  type: z.string().max(512),
  message: z.string(),
  traceback: z.string().default(""),
});

export const readyFrameSchema = z.object({
  type: z.literal("ready"),
  language: z.string(),
  pid: z.number().int(),
});

export const resultFrameSchema = z.object({
  type: z.literal("result"),
  id: z.string(),
  ok: z.boolean(),
  exitCode: z.number().int(),
  value: z.unknown().optional(),
  valueKind: z.enum(["json", "repr"]).optional(),
  error: errorInfoSchema.optional(),
  resetState: z.boolean().optional(),
});

/**
 * A `tool_call` frame: an upstream call from user code. Only `callId` is checked here, so that
 * a call with a bad tool name or bad arguments still gets an error reply (see parseUpstreamCall
 * in upstream-calls.ts).
 */
export const toolCallFrameSchema = z.object({
  type: z.literal("tool_call"),
  id: z.string().max(64).optional(),
  callId: z.string().min(1).max(128),
  tool: z.unknown(),
  args: z.unknown(),
});

/**
 * A `call` frame: user code calling one of sandgate's operations (`op` its id, e.g. "codemode.search")
 * or passing content to the agent (`op` "return"). Answered with a `tool_result` frame like a tool
 * call; `op` and `args` are checked by the host later so that a bad request still gets an error reply.
 */
export const callFrameSchema = z.object({
  type: z.literal("call"),
  id: z.string().max(64).optional(),
  callId: z.string().min(1).max(128),
  op: z.unknown(),
  args: z.unknown(),
});

/**
 * An `image` frame: an image the run returns (a plot, sandgate.show). Checked further by the
 * sandbox's ImageCollector (type, magic bytes, caps); without `data` it names an image the runner
 * did not send because it was over `maxImageBytes`.
 */
export const imageFrameSchema = z.object({
  type: z.literal("image"),
  id: z.string().max(64).optional(),
  mime: z.string().max(256),
  data: z.string().optional(),
  size: z.number().int().nonnegative().optional(),
});

export const runnerFrameSchema = z.discriminatedUnion("type", [readyFrameSchema, resultFrameSchema, toolCallFrameSchema, callFrameSchema, imageFrameSchema]);
export type RunnerFrame = z.infer<typeof runnerFrameSchema>;
export type ResultFrame = z.infer<typeof resultFrameSchema>;
export type ToolCallFrame = z.infer<typeof toolCallFrameSchema>;
export type ImageFrame = z.infer<typeof imageFrameSchema>;
export type CallFrame = z.infer<typeof callFrameSchema>;

export type ToolResultFrame =
  | { type: "tool_result"; callId: string; ok: true; value?: unknown }
  | { type: "tool_result"; callId: string; ok: false; error: { type: string; message: string } };

export function encodeFrame(frame: ExecuteFrame | ToolResultFrame): Buffer {
  return frameOfJson(JSON.stringify(frame));
}

/** A frame of JSON text already made: its UTF-8 length as 4 bytes big-endian, then the text. */
export function frameOfJson(json: string): Buffer {
  const length = Buffer.byteLength(json, "utf8");
  const out = Buffer.allocUnsafe(4 + length);
  out.writeUInt32BE(length, 0);
  out.write(json, 4, "utf8");
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

export class FrameProtocolError extends Error {
  override name = "FrameProtocolError";
}

/**
 * Accumulates bytes from a runner and yields complete, schema-checked frames. Chunks of a frame
 * are kept in a list and joined once, when the frame is complete: joining on every chunk made a
 * 64 MiB frame cost the event loop seconds (quadratic copying).
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Body length of the frame being received, once its header is in. */
  private need = -1;

  constructor(private readonly maxFrameBytes = MAX_RUNNER_FRAME_BYTES) {}

  /** Bytes held for an incomplete frame. */
  get pendingBytes(): number {
    return this.buffered;
  }

  push(chunk: Buffer): RunnerFrame[] {
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    const frames: RunnerFrame[] = [];
    for (;;) {
      if (this.need < 0) {
        if (this.buffered < 4) break;
        const length = this.take(4).readUInt32BE(0);
        if (length > this.maxFrameBytes) throw new FrameProtocolError(`frame of ${length} bytes exceeds the ${this.maxFrameBytes} byte limit`);
        this.need = length;
      }
      if (this.buffered < this.need) break;
      const body = this.take(this.need);
      this.need = -1;
      const frame = decodeFrame(body);
      if (frame) frames.push(frame);
    }
    return frames;
  }

  /** The first `n` buffered bytes (n <= buffered), copied at most once. */
  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      out = Buffer.allocUnsafe(n);
      let filled = 0;
      while (filled < n) {
        const head = this.chunks[0]!;
        const used = Math.min(head.length, n - filled);
        head.copy(out, filled, 0, used);
        filled += used;
        if (used === head.length) this.chunks.shift();
        else this.chunks[0] = head.subarray(used);
      }
    }
    this.buffered -= n;
    return out;
  }
}

function decodeFrame(body: Buffer): RunnerFrame | undefined {
  let json: unknown;
  try {
    json = JSON.parse(cutTooDeep(body).toString("utf8"));
  } catch {
    throw new FrameProtocolError("runner sent a frame that is not JSON");
  }
  const parsed = runnerFrameSchema.safeParse(json);
  // A `tool_call` (or `call`) frame without a usable callId cannot be answered; user code may write to fd 4 too,
  // so it is dropped rather than taken as the runner breaking the protocol.
  if (!parsed.success && isObject(json) && (json.type === "tool_call" || json.type === "call")) return undefined;
  if (!parsed.success) throw new FrameProtocolError(`runner sent an invalid frame: ${parsed.error.issues[0]?.message ?? "?"}`);
  return parsed.data;
}
