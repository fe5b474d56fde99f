// file_read's answer: text as text; an image as MCP image content the agent can see; another file
// that is not UTF-8 as base64 with an MCP embedded resource (a blob, its type guessed) when small,
// else a pointer to the REST download.

import type { z } from "zod";
import type { WorkspaceFile } from "../../execution/index.js";
import type { McpExtras } from "../../operations/index.js";
import { rasterImageType } from "../../sandbox/index.js";
import { mimeTypeOf } from "./mime.js";
import type { fileReadOutput } from "./wire.js";

/** Largest binary file sent inline as a blob resource, bytes. */
export const MAX_BLOB_BYTES = 1024 * 1024;
/** Largest image sent as image content: what a model reads well, and a reply of bounded size. */
export const MAX_IMAGE_BYTES = 1024 * 1024;

export type FileReadOutput = z.infer<typeof fileReadOutput>;

/** What a read answers on every surface, and the content MCP sends besides its text (an image, a blob). */
export interface FileReadReply {
  output: FileReadOutput;
  content?: Pick<McpExtras, "images" | "resources">;
}

/** The reply for `file` (read as base64) when the caller named no encoding or asked for utf8. */
export function fileReadReply(file: WorkspaceFile, sessionId: string): FileReadReply {
  const bytes = Buffer.from(file.content, "base64");
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return { output: { path: file.path, content: text, encoding: "utf8", size: file.size } };
  } catch {
    // not UTF-8: a binary file
  }
  // The type its bytes say, whatever its name: a client shows image content by its mimeType.
  const imageType = rasterImageType(bytes);
  if (imageType !== undefined && bytes.length <= MAX_IMAGE_BYTES) {
    const note = `${file.path} is an image (${imageType}, ${file.size} bytes), sent as image content; encoding "base64" returns its bytes as text`;
    return { output: { path: file.path, content: "", encoding: "base64", size: file.size, note }, content: { images: [{ mimeType: imageType, data: file.content }] } };
  }
  const mimeType = mimeTypeOf(file.path);
  const relative = file.path.replace(/^\/workspace\/?/, "");
  const download = `GET /sessions/${encodeURIComponent(sessionId)}/files/content?path=${encodeURIComponent(relative)}`;
  if (bytes.length > MAX_BLOB_BYTES) {
    const note = `${file.path} is a binary file (${mimeType}) of ${file.size} bytes, more than the ${MAX_BLOB_BYTES / 1048576} MiB sent inline; download it over REST (${download}) or work on it with code in the session (encoding "base64" would return all of it as text)`;
    return { output: { path: file.path, content: "", encoding: "base64", size: file.size, note } };
  }
  const note = `${file.path} is a binary file (${mimeType}, ${file.size} bytes), sent as an embedded resource (base64 blob)`;
  return {
    output: { path: file.path, content: file.content, encoding: "base64", size: file.size, note },
    content: { resources: [{ uri: `file://${file.path}`, mimeType, blob: file.content }] },
  };
}
