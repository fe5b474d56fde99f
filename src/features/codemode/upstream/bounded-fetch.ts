// The fetch the HTTP transports use: every response body passes through a byte counter, so one
// SSE event, one JSON body or one request's whole response cannot grow without limit.

import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

/** An upstream sent more than a cap allows; the connection must be reset. */
export class UpstreamLimitError extends Error {
  override readonly name = "UpstreamLimitError";
}

export interface BoundedFetchOptions {
  /** Server name, for the error text. */
  server: string;
  /** Largest SSE event or JSON body. */
  maxMessageBytes: number;
  /** Largest response to one POST (an SSE stream of notifications and the result). */
  maxResponseBytes: number;
  /** Called once per response that broke a cap, before its reader sees the error. */
  onExceeded: (error: UpstreamLimitError) => void;
}

const LF = 0x0a;
const CR = 0x0d;

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

export function limitError(server: string, what: string, cap: number): UpstreamLimitError {
  return new UpstreamLimitError(
    `upstream server \`${server}\` sent ${what} larger than the ${formatBytes(cap)} limit (codeMode.maxUpstreamMessageBytes); sandgate reset the connection`,
  );
}

/** `fetch` with bounded response bodies; redirects and statuses pass through untouched. */
export function boundedFetch(options: BoundedFetchOptions, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (response.body === null) return response;
    const sse = mediaType(response.headers.get("content-type")) === "text/event-stream";
    const get = (init?.method ?? "GET").toUpperCase() === "GET";
    // A GET stream is the server's standing channel: its events are bounded, its length is not.
    const total = sse ? (get ? Infinity : options.maxResponseBytes) : options.maxMessageBytes;
    const body = response.body.pipeThrough(counter(options, sse, total));
    const bounded = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    // The SDK names redirect targets relative to response.url.
    Object.defineProperty(bounded, "url", { value: response.url });
    return bounded;
  };
}

function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

/** Counts bytes, and for SSE the bytes of the event being read (an event ends at a blank line). */
function counter(options: BoundedFetchOptions, sse: boolean, total: number): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  let event = 0;
  let line = 0;
  let afterCR = false;
  const fail = (controller: TransformStreamDefaultController<Uint8Array>, error: UpstreamLimitError): void => {
    options.onExceeded(error);
    controller.error(error);
  };
  return new TransformStream({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > total) {
        const cap = total === options.maxMessageBytes ? total : options.maxResponseBytes;
        fail(controller, limitError(options.server, sse ? "a streamed response" : "a response body", cap));
        return;
      }
      if (sse) {
        for (const byte of chunk) {
          if (byte === LF && afterCR) {
            afterCR = false;
            continue;
          }
          afterCR = byte === CR;
          if (byte === LF || byte === CR) {
            if (line === 0) event = 0;
            line = 0;
          } else {
            line++;
            if (++event > options.maxMessageBytes) {
              fail(controller, limitError(options.server, "an SSE event", options.maxMessageBytes));
              return;
            }
          }
        }
      }
      controller.enqueue(chunk);
    },
  });
}
