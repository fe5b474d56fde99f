// Cuts what a runner frame nests deeper than any answer shows, before JSON.parse builds it.
// A hand-written frame of 4 MB of brackets would otherwise cost the event loop ~0.7 s per frame.

/** Deeper than every limit that shows a value (result 256, secret and PII masks 300). */
export const MAX_FRAME_DEPTH = 1000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x5b, 0x7b]);
const CLOSERS = new Set([0x5d, 0x7d]);
const NULL = Buffer.from("null");

/** The index just past the string whose opening quote is at `start` (body.length if it never ends). */
function endOfString(body: Buffer, start: number): number {
  let at = start + 1;
  for (;;) {
    const quote = body.indexOf(QUOTE, at);
    if (quote === -1) return body.length;
    let backslashes = 0;
    while (body[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

/**
 * The frame's JSON text with every array or object that opens deeper than `maxDepth` replaced by
 * null, so the value still nests deeper than what is shown and is refused as such, cheaply.
 * Text that is not JSON stays not JSON; the frame's own fields (type, id) are never that deep.
 */
export function cutTooDeep(body: Buffer, maxDepth = MAX_FRAME_DEPTH): Buffer {
  if (body.length <= maxDepth) return body;
  const pieces: Buffer[] = [];
  let depth = 0;
  let kept = 0;
  for (let at = 0; at < body.length; ) {
    const byte = body[at]!;
    if (byte === QUOTE) {
      at = endOfString(body, at);
      continue;
    }
    if (OPENERS.has(byte) && ++depth > maxDepth) {
      const start = at;
      let inner = 0;
      for (at++; at < body.length && inner >= 0; ) {
        const b = body[at]!;
        if (b === QUOTE) at = endOfString(body, at);
        else {
          if (OPENERS.has(b)) inner++;
          else if (CLOSERS.has(b)) inner--;
          at++;
        }
      }
      pieces.push(body.subarray(kept, start), NULL);
      kept = at;
      depth--;
      continue;
    }
    if (CLOSERS.has(byte)) depth--;
    at++;
  }
  if (pieces.length === 0) return body;
  pieces.push(body.subarray(kept));
  return Buffer.concat(pieces);
}
