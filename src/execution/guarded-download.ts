// A downloaded file's bytes on their way to the agent through code mode's OutputGuard: a text file is
// tokenized as it streams (held to line ends like streamed output) in the encoding it was written in
// (UTF-8, UTF-16, UTF-32, else byte for byte as Latin-1); a binary one passes as it is.

import { Transform, type Readable } from "node:stream";
import { OutputBoundary } from "./output-boundary.js";
import { encodeText, sniffEncoding, textDecoder, type TextEncoding } from "./text-encoding.js";
import type { OutputGuard } from "./upstream-call-scope.js";

/** Bytes looked at before a file is taken for text or binary (see sniffEncoding). */
const SNIFF_BYTES = 65_536;

/** `body` tokenized when it is text; the length may change, so the size must not be promised. */
export function guardedBody(body: Readable, guard: OutputGuard): Readable {
  let head: Buffer[] = [];
  let headBytes = 0;
  let encoding: TextEncoding | undefined;
  let decode: (data: Buffer, final: boolean) => string = () => "";
  const boundary = new OutputBoundary(guard);
  const push = (data: Buffer): void => void out.push(data);
  const emit = boundary.stream((_stream, text) => {
    if (encoding !== undefined && encoding !== "binary") push(encodeText(text, encoding));
  });

  const decide = (final: boolean): void => {
    const data = Buffer.concat(head);
    head = [];
    encoding = sniffEncoding(data, final);
    if (encoding === "binary") return push(data);
    decode = textDecoder(encoding);
    emit("stdout", decode(data, final));
  };

  const out = new Transform({
    // The next chunk is taken once this one was scanned (in slices, taking turns with other callers).
    transform(chunk: Buffer, _encoding, done) {
      if (encoding === "binary") return done(null, chunk);
      if (encoding !== undefined) emit("stdout", decode(chunk, false));
      else {
        head.push(chunk);
        headBytes += chunk.length;
        if (headBytes >= SNIFF_BYTES) decide(false);
      }
      boundary.settled().then(() => done(), done);
    },
    flush(done) {
      if (encoding === undefined) decide(true);
      if (encoding === "binary") return done();
      const rest = decode(Buffer.alloc(0), true);
      if (rest) emit("stdout", rest);
      boundary.flush().then(() => done(), done);
    },
  });
  body.on("error", (error) => out.destroy(error));
  out.on("close", () => body.destroy());
  return body.pipe(out);
}
