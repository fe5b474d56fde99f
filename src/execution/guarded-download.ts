// A downloaded file's bytes on their way to the agent through code mode's OutputGuard: a text file is
// tokenized as it streams (held to line ends like streamed output); a binary one passes as it is.

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
  const decoder = new TextDecoder("utf-8");
  const boundary = new OutputBoundary(guard);
  const push = (data: Buffer): void => void out.push(data);
  const emit = boundary.stream((_stream, text) => push(Buffer.from(text, "utf8")));

  const decide = (final: boolean): void => {
    const data = Buffer.concat(head);
    head = [];
    let text = false;
    if (!data.includes(0)) {
      try {
        // Not final: a character cut at the sniff's end is not an error.
        new TextDecoder("utf-8", { fatal: true }).decode(data, { stream: !final });
        text = true;
      } catch {
        text = false;
      }
    }
    mode = text ? "text" : "binary";
    if (mode === "binary") push(data);
    else emit("stdout", decoder.decode(data, { stream: true }));
  };

  const out = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (mode === "binary") return done(null, chunk);
      if (mode === "text") {
        emit("stdout", decoder.decode(chunk, { stream: true }));
        return done();
      }
      head.push(chunk);
      headBytes += chunk.length;
      if (headBytes >= SNIFF_BYTES) decide(false);
      done();
    },
    flush(done) {
      if (mode === "sniffing") decide(true);
      if (mode === "text") {
        const rest = decoder.decode();
        if (rest) emit("stdout", rest);
        boundary.flush();
      }
      done();
    },
  });
  body.on("error", (error) => out.destroy(error));
  out.on("close", () => body.destroy());
  return body.pipe(out);
}
