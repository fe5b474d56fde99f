// `sandgate exec --images DIR`: the images a call returned, written as numbered files in DIR
// (image-1.png, image-2.svg, ...) numbered after any already there, never over an existing file.

import { accessSync, constants, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SandgateError } from "../errors/index.js";
import type { ImageOutput } from "../execution/index.js";

const EXTENSION: Record<ImageOutput["mime"], string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/svg+xml": "svg",
};

const NUMBERED = /^image-(\d+)\./;

/**
 * Makes sure `dir` is a directory images can be written to (creating it), before any code runs:
 * a bad --images is bad input, said at once, not a failure after the run.
 */
export function prepareImagesDir(dir: string): void {
  if (dir === "") throw new SandgateError("INVALID_INPUT", "--images needs a directory name");
  try {
    mkdirSync(dir, { recursive: true });
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "EEXIST" || code === "ENOTDIR" ? "it is a file, not a directory" : code === "EACCES" || code === "EPERM" || code === "EROFS" ? "it is not writable" : (code ?? "it cannot be created");
    throw new SandgateError("INVALID_INPUT", `--images ${dir}: ${why}; name a directory to save the images in`);
  }
}

/** Writes each image to image-N.EXT in `dir` (created if missing), N after the highest there; returns the paths. */
export function saveImages(images: readonly ImageOutput[], dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const paths: string[] = [];
  let n = Math.max(0, ...readdirSync(dir).map((name) => Number(NUMBERED.exec(name)?.[1] ?? 0)));
  for (const image of images) {
    const data = Buffer.from(image.dataBase64, "base64");
    for (;;) {
      const path = join(dir, `image-${++n}.${EXTENSION[image.mime]}`);
      try {
        writeFileSync(path, data, { flag: "wx" });
        paths.push(path);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
  }
  return paths;
}
