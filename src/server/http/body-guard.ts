// The request body at the door: read whole before any route sees it, within a byte cap (413)
// and a deadline (408, connection closed), so a slow or stalled sender holds nothing for long.

import type { Socket } from "node:net";
import type { Context, MiddlewareHandler } from "hono";
import { SandgateError } from "../../errors/index.js";
import { errorResponse } from "./errors.js";

export interface BodyGuardOptions {
  maxBytes: number;
  timeoutMs: number;
  /** Requests whose body a route streams and bounds itself (file uploads): left unread here. */
  exempt?: (c: Context) => boolean;
}

type Outcome = { ok: true; body: Uint8Array } | { ok: false; error: SandgateError };

async function readWithin(body: ReadableStream<Uint8Array>, options: BodyGuardOptions): Promise<Outcome> {
  const reader = body.getReader();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), options.timeoutMs);
  });
  const chunks: Uint8Array[] = [];
  let size = 0;
  let complete = false;
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), expired]);
      if (next === "timeout") {
        const seconds = Math.round(options.timeoutMs / 100) / 10;
        return {
          ok: false,
          error: new SandgateError("REQUEST_TIMEOUT", `the request body did not arrive within ${seconds} s (server.bodyTimeoutS); send it whole and promptly`, {
            data: { timeoutS: seconds, receivedBytes: size },
          }),
        };
      }
      if (next.done) {
        complete = true;
        break;
      }
      size += next.value.length;
      if (size > options.maxBytes) {
        return { ok: false, error: tooLarge(options.maxBytes) };
      }
      chunks.push(next.value);
    }
  } finally {
    clearTimeout(timer);
    if (!complete) void reader.cancel().catch(() => undefined);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return { ok: true, body: out };
}

function tooLarge(maxBytes: number): SandgateError {
  return new SandgateError("BODY_TOO_LARGE", `the request body is larger than ${maxBytes} bytes (server.maxBodyBytes)`);
}

/** The socket behind a request served by @hono/node-server, when there is one. */
function socketOf(env: unknown): Socket | undefined {
  return (env as { incoming?: { socket?: Socket } } | undefined)?.incoming?.socket;
}

export function bodyGuard(options: BodyGuardOptions): MiddlewareHandler {
  return async (c, next) => {
    const body = c.req.raw.body;
    if (!body || options.exempt?.(c)) return next();
    const declared = c.req.header("content-length");
    if (declared !== undefined && !c.req.raw.headers.has("transfer-encoding") && Number(declared) > options.maxBytes) {
      return refuseUnread(c, tooLarge(options.maxBytes));
    }
    const outcome = await readWithin(body, options);
    if (!outcome.ok) return refuseUnread(c, outcome.error);
    c.req.raw = new Request(c.req.raw, { body: outcome.body });
    return next();
  };
}

/**
 * The error reply to a request whose body will not be read (whole): the connection cannot carry
 * another request, and says so. Without `Connection: close` a keep-alive client (fetch) sent its
 * next request down a socket the server was closing, and that request failed ("other side closed").
 */
function refuseUnread(c: Context, error: SandgateError): Response {
  c.header("connection", "close");
  const response = errorResponse(c, error);
  const socket = socketOf(c.env);
  if (socket) setTimeout(() => socket.destroySoon(), 100).unref();
  return response;
}
