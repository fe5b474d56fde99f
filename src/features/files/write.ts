// files.write: a file of the caller's session's /workspace created or replaced, the session
// started on demand (MCP file_write; REST's JSON form of PUT /sessions/{session_id}/files/content).

import type { Engine } from "../../execution/index.js";
import { defineOperation } from "../../operations/index.js";
import { sessionOnDemand } from "../sessions/index.js";
import { fileWriteInput, fileWriteOutput } from "./wire.js";

/** The notes of writes that started a new session, keyed by the output run returned: MCP's text tells the agent, the output has no field for it. */
const notes = new WeakMap<object, string>();

export const writeFile = defineOperation({
  id: "files.write",
  summary: "Write a workspace file",
  scope: "files",
  effects: ["write", "delete"],
  idempotent: true,
  input: fileWriteInput,
  output: fileWriteOutput,
  async run(host: { engine: Engine }, input, call) {
    const { note } = sessionOnDemand(host.engine.sessions, input.session_id, call.owner);
    const written = await host.engine.files.write(input.session_id, input.path, input.content, input.encoding ?? "utf8", call.owner);
    if (note) notes.set(written, note);
    return written;
  },
  surfaces: {
    mcp: {
      tool: "file_write",
      title: "Write a workspace file",
      description: "Create or replace a file in a session's /workspace (parents created).",
      text: (out) => {
        const note = notes.get(out);
        return `${note ? `Note: ${note}.\n` : ""}Wrote ${out.size} bytes to ${out.path}.`;
      },
    },
    rest: null,
    sandbox: null,
  },
});
