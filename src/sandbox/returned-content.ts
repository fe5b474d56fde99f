// Upstream MCP content that Bash code passes on to the agent (`sandgate-tool --return`): images go to
// the run's image collector (checked there as hostile input), the rest becomes text for the output.

import { MAX_RUNNER_FRAME_BYTES, type ImageFrame } from "./protocol.js";

export interface ReturnedContent {
  images: ImageFrame[];
  /** Text blocks, resource texts and one line naming each block the result cannot carry. */
  text: string;
}

/**
 * Text one return may make, in characters: what its request could carry. Only the notes on blocks it
 * cannot pass on make more text than came in (a note per 11-byte `{"type":""}`, ten times the bytes),
 * and building hundreds of MiB of them held the host's event loop for seconds.
 */
const MAX_TEXT_CHARS = MAX_RUNNER_FRAME_BYTES;

type Block = Record<string, unknown>;

const isBlock = (value: unknown): value is Block => typeof value === "object" && value !== null && !Array.isArray(value) && typeof (value as Block).type === "string";
const str = (value: unknown, max: number): string => (typeof value === "string" ? value.slice(0, max) : "");
const base64Bytes = (value: unknown): number => (typeof value === "string" ? Math.floor((value.length * 3) / 4) : 0);

function note(kind: string, mime: string, bytes: number, uri = ""): string {
  const what = [kind, uri, mime ? `(${mime}, ${bytes} bytes)` : `(${bytes} bytes)`].filter(Boolean).join(" ");
  return `[${what} not passed on: the result carries text and images only; write it to a file in /workspace if it is needed later]`;
}

/** An image frame for the collector; data that is not a string becomes a frame without data (refused there). */
function imageFrame(data: unknown, mime: unknown): ImageFrame {
  const frame: ImageFrame = { type: "image", mime: str(mime, 256) };
  if (typeof data === "string") frame.data = data.replace(/\s+/g, "");
  return frame;
}

/**
 * The blocks of `value` (one block, an array of them, or a tool result with `content`), or an error
 * message for anything else. The same mapping as Python's return_content and JavaScript's returnContent.
 */
export function returnedContent(value: unknown): ReturnedContent | { error: string } {
  let content = value;
  if (typeof content === "object" && content !== null && !Array.isArray(content) && !("type" in content) && Array.isArray((content as Block).content)) {
    content = (content as Block).content;
  }
  if (isBlock(content)) content = [content];
  if (!Array.isArray(content)) return { error: "the content must be an MCP content block, an array of blocks or a tool result with content" };
  const images: ImageFrame[] = [];
  const lines: string[] = [];
  let chars = 0;
  const add = (text: string): boolean => {
    chars += text.length + 1;
    lines.push(text);
    return chars <= MAX_TEXT_CHARS;
  };
  for (const block of content as unknown[]) {
    if (!isBlock(block)) return { error: "every item of the content must be an MCP content block (an object with a type)" };
    const kind = block.type as string;
    let fits = true;
    if (kind === "image") images.push(imageFrame(block.data, block.mimeType));
    else if (kind === "text") fits = add(typeof block.text === "string" ? block.text : "");
    else if (kind === "resource") {
      const resource = typeof block.resource === "object" && block.resource !== null ? (block.resource as Block) : {};
      const mime = str(resource.mimeType, 100);
      if (typeof resource.text === "string") fits = add(resource.text);
      else if (mime.startsWith("image/") && typeof resource.blob === "string") images.push(imageFrame(resource.blob, mime));
      else fits = add(note("resource", mime, base64Bytes(resource.blob), str(resource.uri, 200)));
    } else if (kind === "resource_link") fits = add(`[resource ${str(block.uri, 500)}${block.name ? ` ${str(block.name, 200)}` : ""}]`);
    else fits = add(note(kind.slice(0, 40), str(block.mimeType, 100), base64Bytes(block.data)));
    if (!fits) {
      return { error: `the content makes more than ${MAX_TEXT_CHARS >> 20} MiB of text (${content.length} blocks); pass on fewer blocks, or write the rest to a file in /workspace` };
    }
  }
  return { images, text: lines.map((line) => (line.endsWith("\n") ? line : `${line}\n`)).join("") };
}
