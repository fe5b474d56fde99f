// A streaming multipart/form-data reader (RFC 7578): parts one after another, each body an async
// stream of chunks, so a 100 MB file part is never held whole. Only what uploads need.

import { SandgateError } from "../../errors/index.js";

export interface FormPart {
  /** The `name` of its Content-Disposition. */
  name: string;
  /** The `filename`, when the part is a file. */
  filename?: string;
  body: AsyncIterable<Uint8Array>;
}

const MAX_HEADER_BYTES = 16 * 1024;

function malformed(why: string): SandgateError {
  return new SandgateError("INVALID_INPUT", `the multipart/form-data body is malformed: ${why}`);
}

/** The boundary of a multipart/form-data Content-Type; undefined for any other type. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data\s*(;|$)/i.test(contentType)) return undefined;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

/** Bytes pulled from `source` on demand, with what was read but not yet taken kept in front. */
class Buffered {
  private buf = Buffer.alloc(0);
  private done = false;
  private readonly it: AsyncIterator<Uint8Array>;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.it = source[Symbol.asyncIterator]();
  }

  get data(): Buffer {
    return this.buf;
  }

  /** Reads one more chunk; false at the end of the source. */
  async more(): Promise<boolean> {
    if (this.done) return false;
    const next = await this.it.next();
    if (next.done) {
      this.done = true;
      return false;
    }
    this.buf = this.buf.length === 0 ? Buffer.from(next.value) : Buffer.concat([this.buf, next.value]);
    return true;
  }

  take(n: number): Buffer {
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  async close(): Promise<void> {
    await this.it.return?.();
  }
}

function parameter(disposition: string, key: string): string | undefined {
  const extended = extendedParameter(disposition, key);
  if (extended !== undefined) return extended;
  const match = new RegExp(`;\\s*${key}="((?:[^"\\\\]|\\\\.)*)"|;\\s*${key}=([^;\\s]+)`, "i").exec(disposition);
  const value = match?.[1] ?? match?.[2];
  return value?.replace(/\\(.)/g, "$1");
}

/** An RFC 5987 `key*=charset'lang'value` (urllib3 1.x sends non-ASCII file names so), decoded; undefined when absent or undecodable. */
function extendedParameter(disposition: string, key: string): string | undefined {
  const match = new RegExp(`;\\s*${key}\\*=([A-Za-z0-9._-]+)'[^']*'([^;\\s]+)`, "i").exec(disposition);
  if (!match) return undefined;
  const charset = match[1]!.toLowerCase();
  if (charset !== "utf-8" && charset !== "iso-8859-1") return undefined;
  const bytes: number[] = [];
  const text = match[2]!;
  for (let i = 0; i < text.length; i++) {
    const hex = text[i] === "%" ? /^[0-9A-Fa-f]{2}$/.exec(text.slice(i + 1, i + 3)) : null;
    if (hex) {
      bytes.push(parseInt(hex[0], 16));
      i += 2;
    } else bytes.push(text.charCodeAt(i) & 0xff);
  }
  const buffer = Buffer.from(bytes);
  if (charset === "iso-8859-1") return buffer.toString("latin1");
  const decoded = buffer.toString("utf8");
  return decoded.includes("\ufffd") ? undefined : decoded;
}

/**
 * The parts of a multipart body, in order. A part's body must be read (or left: it is skipped)
 * before the next part comes. Throws INVALID_INPUT for a body that breaks the format.
 */
export async function* formParts(source: AsyncIterable<Uint8Array>, boundary: string): AsyncGenerator<FormPart> {
  const reader = new Buffered(source);
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  // The first delimiter may open the body without the CRLF before it.
  const first = Buffer.from(`--${boundary}`);
  try {
    while (reader.data.length < first.length) if (!(await reader.more())) throw malformed("no opening boundary");
    if (reader.data.subarray(0, first.length).equals(first)) reader.take(first.length);
    else {
      // A preamble: skip to the first delimiter.
      for (;;) {
        const at = reader.data.indexOf(delimiter);
        if (at >= 0) {
          reader.take(at + delimiter.length);
          break;
        }
        reader.take(Math.max(0, reader.data.length - delimiter.length));
        if (!(await reader.more())) throw malformed("no opening boundary");
      }
    }
    for (;;) {
      // After a delimiter: "--" ends the body, CRLF starts a part's headers.
      while (reader.data.length < 2) if (!(await reader.more())) throw malformed("the body ends inside a boundary");
      const mark = reader.take(2).toString("latin1");
      if (mark === "--") return;
      if (mark !== "\r\n") throw malformed("a boundary is followed by neither CRLF nor --");
      let end = reader.data.indexOf("\r\n\r\n");
      while (end < 0) {
        if (reader.data.length > MAX_HEADER_BYTES) throw malformed(`a part's headers are longer than ${MAX_HEADER_BYTES} bytes`);
        if (!(await reader.more())) throw malformed("the body ends inside a part's headers");
        end = reader.data.indexOf("\r\n\r\n");
      }
      const headers = reader.take(end + 4).toString("utf8").split("\r\n");
      const disposition = headers.find((h) => /^content-disposition:/i.test(h));
      const name = disposition ? parameter(disposition, "name") : undefined;
      if (!disposition || name === undefined) throw malformed("a part has no Content-Disposition with a name");
      const filename = parameter(disposition, "filename");
      let finished = false;
      const body = async function* (): AsyncGenerator<Uint8Array> {
        for (;;) {
          const at = reader.data.indexOf(delimiter);
          if (at >= 0) {
            if (at > 0) yield reader.take(at);
            reader.take(delimiter.length);
            finished = true;
            return;
          }
          // Everything but a tail that could be the start of the delimiter is this part's.
          const safe = reader.data.length - (delimiter.length - 1);
          if (safe > 0) yield reader.take(safe);
          if (!(await reader.more())) throw malformed("the body ends inside a part (no closing boundary)");
        }
      };
      const stream = body();
      yield { name, ...(filename !== undefined ? { filename } : {}), body: stream };
      // The consumer left part of the body unread: skip it.
      if (!finished) for await (const _ of stream) void _;
      if (!finished) throw malformed("a part was left before its end");
    }
  } finally {
    await reader.close();
  }
}
