// Output shaping: what the caller sees of a run's stdout/stderr (head and tail within the
// display budget), with a pointer to the saved full text when it did not fit.

import { bytesAt, type LongBytes } from "./long-output.js";

/** Where a saved full output can be read back. */
export interface SavedRef {
  /** MCP resource URI, sandgate://outputs/{id}/{stream}. */
  uri: string;
  /** The same through the REST API: /outputs/{id}/{stream}. */
  restPath: string;
}

export interface ShapedStream {
  text: string;
  truncated: boolean;
  /** Resource URI of the full output, when it was longer than shown and could be kept. */
  fullOutput?: string;
  totalBytes: number;
}

/** How a note names a saved output, or says it could not be kept. */
export function savedText(saved: SavedRef | undefined, totalBytes: number): string {
  return saved
    ? `full output (${totalBytes} bytes) saved as ${saved.uri} (REST: GET ${saved.restPath})`
    : `the full output (${totalBytes} bytes) is larger than the saved-output store and was not kept`;
}

/** Keeps the first three quarters and the last quarter of the budget, cut on UTF-8 boundaries. */
export function shapeOutput(data: LongBytes, displayBytes: number, save: () => SavedRef | undefined): ShapedStream {
  if (data.length <= displayBytes) return { text: bytesAt(data, 0).toString("utf8"), truncated: false, totalBytes: data.length };
  const saved = save();
  const headBytes = Math.floor(displayBytes * 0.75);
  const tailBytes = displayBytes - headBytes;
  const head = bytesAt(data, 0, headBytes).toString("utf8").replace(/\uFFFD+$/, "");
  const tail = bytesAt(data, data.length - tailBytes).toString("utf8").replace(/^\uFFFD+/, "");
  const omitted = data.length - headBytes - tailBytes;
  const note = `\n… [${omitted} bytes omitted; ${savedText(saved, data.length)}] …\n`;
  return { text: head + note + tail, truncated: true, ...(saved ? { fullOutput: saved.uri } : {}), totalBytes: data.length };
}
