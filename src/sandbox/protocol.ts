// The framed pipe protocol between the host and a runner (docs/runner-protocol.md):
// 4-byte big-endian length, then UTF-8 JSON. Frames from a runner are untrusted input.

import { z } from "zod";

export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

export interface ExecuteFrame {
  type: "execute";
  id: string;
  code: string;
  marker: string;
  filename: string;
  mode?: "script" | "async";
  cpuSeconds?: number;
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
 * A tool call from user code. Only `callId` is checked here, so that a call with a bad tool name
 * or bad arguments still gets an error reply (see parseToolCall in tool-calls.ts).
 */
export const toolCallFrameSchema = z.object({
  type: z.literal("tool_call"),
  id: z.string().max(64).optional(),
  callId: z.string().min(1).max(128),
  tool: z.unknown(),
  args: z.unknown(),
});

export const runnerFrameSchema = z.discriminatedUnion("type", [readyFrameSchema, resultFrameSchema, toolCallFrameSchema]);
export type RunnerFrame = z.infer<typeof runnerFrameSchema>;
export type ResultFrame = z.infer<typeof resultFrameSchema>;
export type ToolCallFrame = z.infer<typeof toolCallFrameSchema>;

export type ToolResultFrame =
  | { type: "tool_result"; callId: string; ok: true; value?: unknown }
  | { type: "tool_result"; callId: string; ok: false; error: { type: string; message: string } };

export function encodeFrame(frame: ExecuteFrame | ToolResultFrame): Buffer {
  const body = Buffer.from(JSON.stringify(frame), "utf8");
  const out = Buffer.allocUnsafe(4 + body.length);
  out.writeUInt32BE(body.length, 0);
  body.copy(out, 4);
  return out;
}

/**
 * The Bash runner cannot parse JSON, so it gets a header line `<id> <marker>` and then the code,
 * NUL-terminated (bash code never contains NUL; the request check refuses it).
 */
export function encodeBashRequest(id: string, marker: string, code: string): Buffer {
  return Buffer.from(`${id} ${marker}\n${code}\u0000`, "utf8");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

export class FrameProtocolError extends Error {
  override name = "FrameProtocolError";
}

/** Accumulates bytes from a runner and yields complete, schema-checked frames. */
export class FrameDecoder {
  private buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): RunnerFrame[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const frames: RunnerFrame[] = [];
    while (this.buffer.length >= 4) {
      const length = this.buffer.readUInt32BE(0);
      if (length > MAX_FRAME_BYTES) throw new FrameProtocolError(`frame of ${length} bytes exceeds the ${MAX_FRAME_BYTES} byte limit`);
      if (this.buffer.length < 4 + length) break;
      const body = this.buffer.subarray(4, 4 + length).toString("utf8");
      this.buffer = this.buffer.subarray(4 + length);
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        throw new FrameProtocolError("runner sent a frame that is not JSON");
      }
      const parsed = runnerFrameSchema.safeParse(json);
      // A tool call without a usable callId cannot be answered; user code may write to fd 4 too,
      // so it is dropped rather than taken as the runner breaking the protocol.
      if (!parsed.success && isObject(json) && json.type === "tool_call") continue;
      if (!parsed.success) throw new FrameProtocolError(`runner sent an invalid frame: ${parsed.error.issues[0]?.message ?? "?"}`);
      frames.push(parsed.data);
    }
    return frames;
  }
}
