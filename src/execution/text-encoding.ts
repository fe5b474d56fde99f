// Which text encoding a file the code wrote is in, so that PII in it is tokenized whatever encoding
// it was written in: UTF-8, UTF-16 or UTF-32 (with a byte order mark, or UTF-16 told by its NULs), else Latin-1; or binary.

/** How a file's bytes are read as text and written back; "binary" is handed over as it is. */
export type TextEncoding = "utf8" | "latin1" | "utf16le" | "utf16be" | "utf32le" | "utf32be" | "binary";

/**
 * The encoding of `head` (a file's first bytes; `whole` when that is all of it). A byte order mark
 * decides; without one, NUL bytes at every other place of mostly-ASCII text are UTF-16 (what
 * Windows tools and Python's "utf-16-le" write), other NULs are binary; else UTF-8, or Latin-1 byte for byte.
 */
export function sniffEncoding(head: Buffer, whole: boolean): TextEncoding {
  if (head[0] === 0xff && head[1] === 0xfe && head[2] === 0 && head[3] === 0) return "utf32le";
  if (head[0] === 0 && head[1] === 0 && head[2] === 0xfe && head[3] === 0xff) return "utf32be";
  if (head[0] === 0xff && head[1] === 0xfe) return "utf16le";
  if (head[0] === 0xfe && head[1] === 0xff) return "utf16be";
  if (head.includes(0)) return utf16WithoutBom(head) ?? "binary";
  try {
    // Not whole: a character cut at the head's end is not an error.
    new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: !whole });
    return "utf8";
  } catch {
    return "latin1";
  }
}

/** UTF-16 without a byte order mark: NUL at every odd (LE) or even (BE) place and nowhere else, the other bytes not NUL. */
function utf16WithoutBom(head: Buffer): TextEncoding | undefined {
  const pairs = head.length >> 1;
  if (pairs < 2) return undefined;
  let evenNul = 0;
  let oddNul = 0;
  for (let i = 0; i < pairs * 2; i += 2) {
    if (head[i] === 0) evenNul++;
    if (head[i + 1] === 0) oddNul++;
  }
  // Mostly ASCII or Latin-1 text: nearly every high byte NUL, (almost) no low byte NUL.
  if (oddNul >= pairs * 0.9 && evenNul <= pairs * 0.01) return "utf16le";
  if (evenNul >= pairs * 0.9 && oddNul <= pairs * 0.01) return "utf16be";
  return undefined;
}

/** Bytes one code unit takes: cut chunks at a multiple of it. */
export function unitBytes(encoding: TextEncoding): number {
  return encoding === "utf16le" || encoding === "utf16be" ? 2 : encoding === "utf32le" || encoding === "utf32be" ? 4 : 1;
}

/** A streaming decoder of `encoding` (not binary); the byte order mark, if any, is kept as U+FEFF so it is written back. */
export function textDecoder(encoding: Exclude<TextEncoding, "binary">): (data: Buffer, final: boolean) => string {
  if (encoding === "latin1") return (data) => data.toString("latin1");
  if (encoding === "utf8" || encoding === "utf16le") {
    const decoder = new TextDecoder(encoding === "utf8" ? "utf-8" : "utf-16le", { ignoreBOM: true });
    return (data, final) => decoder.decode(data, { stream: !final });
  }
  if (encoding === "utf16be") {
    const decoder = new TextDecoder("utf-16be", { ignoreBOM: true });
    return (data, final) => decoder.decode(data, { stream: !final });
  }
  // UTF-32: whole code points of 4 bytes; a cut one waits for its rest.
  let rest = Buffer.alloc(0);
  const big = encoding === "utf32be";
  return (data, final) => {
    const all = rest.length > 0 ? Buffer.concat([rest, data]) : data;
    const end = final ? all.length : all.length - (all.length % 4);
    rest = all.subarray(end);
    let out = "";
    for (let i = 0; i + 4 <= end; i += 4) {
      const point = big ? all.readUInt32BE(i) : all.readUInt32LE(i);
      out += point <= 0x10ffff ? String.fromCodePoint(point) : "\ufffd";
    }
    return out;
  };
}

/** `text` in `encoding` (not binary), the inverse of textDecoder for what it decoded. */
export function encodeText(text: string, encoding: Exclude<TextEncoding, "binary">): Buffer {
  if (encoding === "utf8" || encoding === "latin1" || encoding === "utf16le") return Buffer.from(text, encoding);
  if (encoding === "utf16be") return Buffer.from(text, "utf16le").swap16();
  const points = [...text].map((c) => c.codePointAt(0) ?? 0xfffd);
  const out = Buffer.alloc(points.length * 4);
  points.forEach((point, i) => (encoding === "utf32be" ? out.writeUInt32BE(point, i * 4) : out.writeUInt32LE(point, i * 4)));
  return out;
}
