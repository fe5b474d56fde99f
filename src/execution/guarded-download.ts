// A downloaded file's bytes on their way to the agent through code mode's OutputGuard: a text file is
// tokenized as it streams (held to line ends like streamed output; one not in UTF-8, such as a Latin-1
// export, byte for byte); a binary one (NUL bytes) passes as it is.

import { Transform, type Readable } from "node:stream";
import { OutputBoundary } from "./output-boundary.js";
import type { OutputGuard } from "./upstream-call-scope.js";

/** Bytes looked at before a file is taken for text (valid UTF-8, no NUL) or binary. */
const SNIFF_BYTES = 65_536;

/** `body` tokenized when it is text; the length may change, so the size must not be promised. */
export function guardedBody(body: Readable, guard: OutputGuard): Readable {
  let head: Buffer[] = [];
  let headBytes = 0;
  let mode: "sniffing" | "text" | "binary" = "sniffing";
  // Text not in UTF-8 is read as latin1: one character per byte, so the bytes around a value come back as they were.
  let encoding: "utf8" | "latin1" = "utf8";
  const decoder = new TextDecoder("utf-8");
  const decode = (data: Buffer): string => (encoding === "latin1" ? data.toString("latin1") : decoder.decode(data, { stream: true }));
  const boundary = new OutputBoundary(guard);
  const push = (data: Buffer): void => void out.push(data);
  const emit = boundary.stream((_stream, text) => push(Buffer.from(text, encoding)));

  const decide = (final: boolean): void => {
    const data = Buffer.concat(head);
    head = [];
    mode = data.includes(0) ? "binary" : "text";
    if (mode === "text") {
      try {
        // Not final: a character cut at the sniff's end is not an error.
        new TextDecoder("utf-8", { fatal: true }).decode(data, { stream: !final });
      } catch {
        encoding = "latin1";
      }
    }
    if (mode === "binary") push(data);
    else emit("stdout", decode(data));
  };

  const out = new Transform({
    // The next chunk is taken once this one was scanned (in slices, taking turns with other callers).
    transform(chunk: Buffer, _encoding, done) {
      if (mode === "binary") return done(null, chunk);
      if (mode === "text") emit("stdout", decode(chunk));
      else {
        head.push(chunk);
        headBytes += chunk.length;
        if (headBytes >= SNIFF_BYTES) decide(false);
      }
      boundary.settled().then(() => done(), done);
    },
    flush(done) {
      if (mode === "sniffing") decide(true);
      if (mode !== "text") return done();
      const rest = encoding === "utf8" ? decoder.decode() : "";
      if (rest) emit("stdout", rest);
      boundary.flush().then(() => done(), done);
    },
  });
  body.on("error", (error) => out.destroy(error));
  out.on("close", () => body.destroy());
  return body.pipe(out);
}
