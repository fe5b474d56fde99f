// files.read: a file of one of the caller's sessions' /workspace (MCP file_read; REST's JSON form
// of GET /sessions/{session_id}/files/content, a raw route that otherwise streams the bytes).

import type { Engine } from "../../execution/index.js";
import { defineOperation, type McpExtras } from "../../operations/index.js";
import { fileReadReply } from "./read-reply.js";
import { fileReadInput, fileReadOutput } from "./wire.js";

/** The image or blob a read's MCP reply sends as content, keyed by the output run returned (the output schema keeps none of it). */
const mcpContent = new WeakMap<object, Pick<McpExtras, "images" | "resources">>();

export const readFile = defineOperation({
  id: "files.read",
  summary: "Read a workspace file",
  scope: "files",
  effects: ["read"],
  input: fileReadInput,
  output: fileReadOutput,
  async run(host: { engine: Engine }, input, call) {
    // A read never starts a session: an id with none is SESSION_NOT_FOUND (or SESSION_EXPIRED).
    const file = await host.engine.files.read(input.session_id, input.path, "base64", call.owner);
    if (input.encoding === "base64") return file;
    // Text comes back as text; an image as image content; another binary file as a blob resource, or a pointer when large.
    const { output, content } = fileReadReply(file, input.session_id);
    if (content) mcpContent.set(output, content);
    return output;
  },
  surfaces: {
    mcp: {
      tool: "file_read",
      title: "Read a workspace file",
      description: "Read a file of a session's /workspace: text as text, an image as image content, other binary as a blob resource (over 1 MiB: a REST download link).",
      text: (out) => out.note ?? out.content,
      extras: (out) => mcpContent.get(out) ?? {},
    },
    rest: null,
    sandbox: null,
  },
});
