// Images a run sends (plots, PIL images, image values, sandgate.show): each checked as hostile input
// (type allowlist, magic bytes, size) and kept within the per-call caps; what is dropped is said.

import type { ImageFrame } from "./protocol.js";

/** Image types a run may return; raster types must start with their format's magic bytes. */
export const IMAGE_MIME_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"] as const;
export type ImageMime = (typeof IMAGE_MIME_TYPES)[number];

export interface RunImage {
  mime: ImageMime;
  /** The image's bytes, base64 as re-encoded by the host (never the runner's text as sent). */
  dataBase64: string;
}

export interface ImageCaps {
  /** Largest image kept, decoded bytes. */
  maxBytes: number;
  /** Images kept per call; later ones are dropped. */
  maxCount: number;
}

const STRICT_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** How far into an SVG document its root element may start (XML declaration, comments, doctype). */
const SVG_ROOT_WITHIN = 4096;

const RASTER_MAGIC: Record<Exclude<ImageMime, "image/svg+xml">, (data: Buffer) => boolean> = {
  "image/png": (d) => d.length >= 8 && d.readUInt32BE(0) === 0x89504e47 && d.readUInt32BE(4) === 0x0d0a1a0a,
  "image/jpeg": (d) => d.length >= 3 && d[0] === 0xff && d[1] === 0xd8 && d[2] === 0xff,
  "image/gif": (d) => d.length >= 6 && (d.toString("latin1", 0, 6) === "GIF87a" || d.toString("latin1", 0, 6) === "GIF89a"),
  "image/webp": (d) => d.length >= 12 && d.toString("latin1", 0, 4) === "RIFF" && d.toString("latin1", 8, 12) === "WEBP",
};

/** The raster image type `data` starts like (its magic bytes), or undefined. */
export function rasterImageType(data: Buffer): Exclude<ImageMime, "image/svg+xml"> | undefined {
  return (Object.keys(RASTER_MAGIC) as Array<keyof typeof RASTER_MAGIC>).find((mime) => RASTER_MAGIC[mime](data));
}

/** Whether `data` is what `mime` says: the format's magic bytes, or for SVG UTF-8 text with an <svg> root near its start. */
function imageMatches(mime: ImageMime, data: Buffer): boolean {
  if (mime !== "image/svg+xml") return RASTER_MAGIC[mime](data);
  const head = data.subarray(0, SVG_ROOT_WITHIN).toString("utf8");
  return /^\s*</.test(head) && /<svg[\s>]/.test(head) && !data.includes(0);
}

function isImageMime(mime: string): mime is ImageMime {
  return (IMAGE_MIME_TYPES as readonly string[]).includes(mime);
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** The images of one run, within its caps; a dropped or refused image is counted for the note. */
export class ImageCollector {
  readonly images: RunImage[] = [];
  private overSize = 0;
  private overCount = 0;
  private refused = 0;
  /** Why the first refused image was refused (only a count is kept of the rest: a flood holds no memory). */
  private firstRefusal = "";

  constructor(private readonly caps: ImageCaps) {}

  add(frame: ImageFrame): void {
    if (!isImageMime(frame.mime)) {
      this.refuse(`type ${JSON.stringify(frame.mime.slice(0, 64))} is not one of ${IMAGE_MIME_TYPES.join(", ")}`);
      return;
    }
    // The runner names an image it did not send because it was over the cap it was told.
    if (frame.data === undefined) {
      if (frame.size !== undefined && frame.size > this.caps.maxBytes) this.overSize += 1;
      else this.refuse("the frame carried no data");
      return;
    }
    if (this.images.length >= this.caps.maxCount) {
      this.overCount += 1;
      return;
    }
    // Base64 is 4/3 of the bytes: a text this long is over the cap whatever it holds.
    if (Math.floor((frame.data.length * 3) / 4) - 2 > this.caps.maxBytes) {
      this.overSize += 1;
      return;
    }
    if (frame.data.length % 4 !== 0 || !STRICT_BASE64.test(frame.data)) {
      this.refuse("its data is not base64");
      return;
    }
    const data = Buffer.from(frame.data, "base64");
    if (data.length > this.caps.maxBytes) {
      this.overSize += 1;
      return;
    }
    if (data.length === 0 || !imageMatches(frame.mime, data)) {
      this.refuse(`its data is not ${frame.mime}`);
      return;
    }
    this.images.push({ mime: frame.mime, dataBase64: data.toString("base64") });
  }

  /** What was dropped and how to get it instead; undefined when every image was kept. */
  note(): string | undefined {
    const parts: string[] = [];
    if (this.overSize > 0) parts.push(`${plural(this.overSize, "image")} over ${formatBytes(this.caps.maxBytes)} dropped (make them smaller: fewer pixels, a lower dpi or JPEG)`);
    if (this.overCount > 0) parts.push(`${plural(this.overCount, "image")} beyond ${this.caps.maxCount} per call dropped (return fewer per call)`);
    if (this.refused > 0) parts.push(`${plural(this.refused, "image")} refused (${this.firstRefusal})`);
    if (parts.length === 0) return undefined;
    // No tool is named: under the codemode profile there is no file_read, and the files stay in /workspace either way.
    return `${parts.join("; ")}; to keep an image as it is, save it to /workspace`;
  }

  private refuse(reason: string): void {
    if (this.refused++ === 0) this.firstRefusal = reason;
  }
}
