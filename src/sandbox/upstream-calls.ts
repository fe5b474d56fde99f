// Calls from sandboxed code: of an upstream tool (callMCPTool, call_mcp_tool, sandgate-tool) or of one of
// sandgate's own operations (the generated stubs' one generic call): their host-side types, the checks each request
// gets, the reply encodings, one run's broker.

import { setMaxListeners } from "node:events";
import { z } from "zod";
import { encodeFrame, frameOfJson, MAX_FRAME_BYTES, MAX_RUNNER_FRAME_BYTES, type ToolResultFrame } from "./protocol.js";

/** A call as user code made it; `tool` is "server.name" as written (the host resolves aliases). */
export interface UpstreamCall {
  tool: string;
  args: unknown;
}

/** `json`, when the handler made it anyway, is `JSON.stringify(value)`: the reply is then not encoded a second time. */
export type UpstreamCallReply = { ok: true; value: unknown; json?: string } | { ok: false; error: { type: string; message: string } };

/** Answers an upstream call; `signal` fires when the run that made the call ends or is killed. */
export type UpstreamCallHandler = (call: UpstreamCall, signal: AbortSignal, clock?: RunClock) => Promise<UpstreamCallReply>;

/**
 * A call of one of sandgate's own operations from sandboxed code (search_tools, searchTools,
 * `sandgate-tool --search`: the runners' one generic call, op and args): `op` is the operation's id, checked
 * here as a name only; `args` are parsed by the handler with the operation's own input schema.
 */
export interface OperationRequest {
  op: string;
  args: unknown;
}

/** Answers an operation request for the code's caller; `signal` fires when the run that made it ends. */
export type OperationHandler = (request: OperationRequest, signal: AbortSignal) => UpstreamCallReply | Promise<UpstreamCallReply>;

/** An operation id as the registry declares them: `feature.verb`. */
export const OPERATION_ID = /^[a-z][a-z0-9_-]{0,31}\.[a-z][a-z0-9_-]{0,31}$/;

/** Checks the op of an operation request; a bad one gets an error reply. */
export function parseOperationRequest(raw: { op?: unknown; args?: unknown }): { ok: true; request: OperationRequest } | { ok: false; reply: UpstreamCallReply } {
  const op = raw.op;
  if (typeof op !== "string" || !OPERATION_ID.test(op)) {
    const shown = typeof op === "string" ? `\`${op.slice(0, 80)}\`` : `a ${op === null ? "null" : typeof op}`;
    return { ok: false, reply: upstreamCallError("InvalidArguments", `call refused: ${shown} is not an operation id (feature.verb, e.g. codemode.search)`) };
  }
  return { ok: true, request: { op, args: raw.args ?? {} } };
}

/** The wall-clock limit of the run that made a call. */
export interface RunClock {
  /**
   * Stops the limit counting until the returned function is called: time a person takes to
   * approve a tool call is not the code's time. Holds may overlap; the limit counts again when all ended.
   */
  hold(): () => void;
}

const MAX_TOOL_NAME_LENGTH = 512;
/** Upstream calls one run may have waiting at once; more is a runaway loop, not a program. */
const MAX_UPSTREAM_CALLS_IN_FLIGHT = 256;

const upstreamCallSchema = z.object({
  tool: z
    .string({ invalid_type_error: "the tool name must be a string", required_error: "the tool name is missing" })
    .min(1, "the tool name is empty")
    .max(MAX_TOOL_NAME_LENGTH, `the tool name is longer than ${MAX_TOOL_NAME_LENGTH} characters`),
  // Checked, not copied: a record schema rebuilt an argument object of a million keys key by key (a second of the host's loop).
  args: z
    .custom<Record<string, unknown>>((args) => typeof args === "object" && args !== null && !Array.isArray(args), "the arguments must be a JSON object")
    .optional()
    .transform((args) => args ?? {}),
});

export function upstreamCallError(type: string, message: string): UpstreamCallReply {
  return { ok: false, error: { type, message } };
}

/**
 * Checks a request from untrusted code; a bad one gets an error reply saying what is wrong. The
 * runners raise it as "tool `x.y` failed: <message>", so the message does not name the tool again.
 */
export function parseUpstreamCall(raw: { tool?: unknown; args?: unknown }): { ok: true; call: UpstreamCall } | { ok: false; reply: UpstreamCallReply } {
  const parsed = upstreamCallSchema.safeParse({ tool: raw.tool, args: raw.args ?? undefined });
  if (parsed.success) return { ok: true, call: parsed.data };
  return { ok: false, reply: upstreamCallError("InvalidArguments", parsed.error.issues[0]?.message ?? "invalid request") };
}

/** The handler's answer, made safe to send: anything but a proper reply becomes an error. */
function normalizeReply(reply: unknown): UpstreamCallReply {
  if (typeof reply === "object" && reply !== null) {
    const r = reply as { ok?: unknown; value?: unknown; json?: unknown; error?: { type?: unknown; message?: unknown } };
    if (r.ok === true) return typeof r.json === "string" ? { ok: true, value: r.value, json: r.json } : { ok: true, value: r.value };
    if (r.ok === false && r.error) {
      return upstreamCallError(typeof r.error.type === "string" ? r.error.type : "ToolError", typeof r.error.message === "string" ? r.error.message : "the tool failed");
    }
  }
  return upstreamCallError("ToolError", "the host returned no result for this tool call");
}

/** JSON of a reply's value, or an error reply when it cannot travel (not JSON, too large). */
function encodeValue(reply: UpstreamCallReply): { json: string } | { error: UpstreamCallReply } {
  if (!reply.ok) return { json: "" };
  let json = reply.json;
  try {
    json ??= JSON.stringify(reply.value);
  } catch (error) {
    return { error: upstreamCallError("ToolError", `the tool result could not be encoded as JSON: ${(error as Error).message}`) };
  }
  json ??= "null";
  // Frame overhead is small; leave room for it rather than compute it exactly.
  if (json.length > MAX_FRAME_BYTES - 1024 && Buffer.byteLength(json) > MAX_FRAME_BYTES - 1024) {
    return { error: upstreamCallError("ToolLimit", `the tool result is larger than the ${MAX_FRAME_BYTES >> 20} MiB a sandbox can receive`) };
  }
  return { json };
}

/** A `tool_result` frame for the Python and Node runners. */
export function encodeToolResultFrame(callId: string, reply: UpstreamCallReply): Buffer {
  const encoded = encodeValue(reply);
  if ("error" in encoded) return encodeToolResultFrame(callId, encoded.error);
  const frame: ToolResultFrame = reply.ok
    ? { type: "tool_result", callId, ok: true }
    : { type: "tool_result", callId, ok: false, error: { type: reply.error.type, message: reply.error.message } };
  if (!reply.ok) return encodeFrame(frame);
  // The value is already JSON text; splice it in rather than stringify it twice.
  const head = JSON.stringify(frame);
  return frameOfJson(`${head.slice(0, -1)},"value":${encoded.json}}`);
}

// ---- the sandgate-tool pipe of Bash (docs/runner-protocol.md, "Tool calls from Bash") ----

const BASH_CALL_ID = /^[A-Za-z0-9._-]{1,64}$/;
const ERROR_TYPE = /[^A-Za-z0-9_]/g;

/** `<callId> ok <bytes>\n<json>\0` or `<callId> error <bytes> <type>\n<message>\0`. */
export function encodeBashUpstreamReply(callId: string, reply: UpstreamCallReply): Buffer {
  const encoded = encodeValue(reply);
  if ("error" in encoded) return encodeBashUpstreamReply(callId, encoded.error);
  if (reply.ok) {
    const body = Buffer.from(encoded.json, "utf8");
    return Buffer.concat([Buffer.from(`${callId} ok ${body.length}\n`), body, Buffer.from([0])]);
  }
  // NUL is the resync point of the stream, so it never appears inside a message.
  const body = Buffer.from(reply.error.message.replaceAll("\u0000", ""), "utf8");
  const type = reply.error.type.replace(ERROR_TYPE, "").slice(0, 64) || "ToolError";
  return Buffer.concat([Buffer.from(`${callId} error ${body.length} ${type}\n`), body, Buffer.from([0])]);
}

export interface BashUpstreamRequest {
  callId: string;
  tool: string;
  /** Raw JSON text as the script got it; parsed and checked by the host. */
  argsText: string;
}

/**
 * Splits the sandgate-tool pipe into requests `<callId> <tool>\n<args JSON>\0`. Malformed ones are
 * skipped (they cannot be answered without an id); one longer than a runner's frame may be is
 * discarded up to its NUL. Pieces are joined once per request, never per chunk.
 */
export class BashUpstreamRequestDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private skipping = false;

  push(chunk: Buffer): BashUpstreamRequest[] {
    const requests: BashUpstreamRequest[] = [];
    let rest = chunk;
    for (let end = rest.indexOf(0); end >= 0; end = rest.indexOf(0)) {
      const tail = rest.subarray(0, end);
      rest = rest.subarray(end + 1);
      const message = this.skipping ? undefined : (this.chunks.length === 0 ? tail : Buffer.concat([...this.chunks, tail])).toString("utf8");
      this.chunks = [];
      this.buffered = 0;
      this.skipping = false;
      const request = message === undefined ? undefined : parseBashRequest(message);
      if (request) requests.push(request);
    }
    if (rest.length > 0 && !this.skipping) {
      this.chunks.push(rest);
      this.buffered += rest.length;
      if (this.buffered > MAX_RUNNER_FRAME_BYTES) {
        this.chunks = [];
        this.buffered = 0;
        this.skipping = true;
      }
    }
    return requests;
  }
}

function parseBashRequest(message: string): BashUpstreamRequest | undefined {
  const newline = message.indexOf("\n");
  const header = (newline < 0 ? message : message.slice(0, newline)).split(" ");
  const [callId, tool] = header;
  if (header.length !== 2 || !callId || !BASH_CALL_ID.test(callId) || tool === undefined) return undefined;
  return { callId, tool, argsText: newline < 0 ? "" : message.slice(newline + 1) };
}

/** Arguments (or `--return` content, `notJson` saying so) from Bash are JSON text; empty means `{}`. */
export function parseBashArgs(text: string, notJson = "the arguments are not valid JSON"): { ok: true; args: unknown } | { ok: false; message: string } {
  if (text.trim() === "") return { ok: true, args: {} };
  try {
    return { ok: true, args: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, message: `${notJson} (${(error as Error).message})` };
  }
}

const ended = (): Error => new Error("the run that made this tool call has ended");

/**
 * The upstream calls of one run: at most MAX_UPSTREAM_CALLS_IN_FLIGHT waiting at once, each answered
 * by the run's handler while the run lasts. end() aborts the signal handlers see and drops late replies.
 */
export class UpstreamCallBroker {
  /** Made with the run's first request: most runs make none, and every run has a broker. */
  private controller: AbortController | undefined;
  private ended = false;
  private inFlight = 0;

  constructor(
    private readonly handler: UpstreamCallHandler | undefined,
    private readonly clock?: RunClock,
    private readonly operations?: OperationHandler,
  ) {}

  call(tool: string, args: unknown, send: (reply: UpstreamCallReply) => void): void {
    const handler = this.handler;
    if (!handler) {
      // No handler: the host has no upstream servers (sandgate exec without mcpServers, or an engine without code mode).
      send(upstreamCallError("ToolNotFound", "no upstream MCP servers are configured here, so there are no tools to call (list them under mcpServers in sandgate.json)"));
      return;
    }
    this.dispatch(`tool \`${tool}\``, (signal) => handler({ tool, args }, signal, this.clock), send);
  }

  /** A call of one of sandgate's operations; it shares the cap on calls in flight with tool calls. */
  operation(request: OperationRequest, send: (reply: UpstreamCallReply) => void): void {
    const handler = this.operations;
    if (!handler) {
      // A bare engine (library use without createApp) serves no operations to its sandboxes.
      send(upstreamCallError("ToolNotFound", `operation ${request.op} is not served to this sandbox (an engine built without sandgate's operations)`));
      return;
    }
    this.dispatch(`operation ${request.op}`, (signal) => handler(request, signal), send);
  }

  /** Runs one request within the cap on requests in flight; its reply is sent unless the run ended first. */
  private dispatch(what: string, answer: (signal: AbortSignal) => UpstreamCallReply | Promise<UpstreamCallReply>, send: (reply: UpstreamCallReply) => void): void {
    if (this.inFlight >= MAX_UPSTREAM_CALLS_IN_FLIGHT) {
      send(upstreamCallError("ToolLimit", `${what} refused: ${MAX_UPSTREAM_CALLS_IN_FLIGHT} tool calls are already waiting; await some before starting more`));
      return;
    }
    this.inFlight += 1;
    const signal = this.signal();
    const settle = (reply: UpstreamCallReply): void => {
      this.inFlight -= 1;
      if (!signal.aborted) send(reply);
    };
    // async, so that a handler that throws instead of rejecting still gets a reply sent.
    const run = async (): Promise<UpstreamCallReply> => answer(signal);
    run().then(
      (reply) => settle(normalizeReply(reply)),
      (error: unknown) => settle(upstreamCallError("ToolError", `${what} failed: ${error instanceof Error ? error.message : String(error)}`)),
    );
  }

  end(): void {
    this.ended = true;
    this.controller?.abort(ended());
  }

  /** What every request of the run listens on; aborted when the run ends. */
  private signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      // Every call in flight listens on this signal; up to the cap that is expected, not a leak.
      setMaxListeners(MAX_UPSTREAM_CALLS_IN_FLIGHT + 16, this.controller.signal);
      if (this.ended) this.controller.abort(ended());
    }
    return this.controller.signal;
  }
}
