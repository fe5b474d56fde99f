// files.list: one directory of the caller's session's /workspace, not recursive (MCP file_list;
// REST GET /sessions/{session_id}/files).

import type { Engine } from "../../execution/index.js";
import { defineOperation } from "../../operations/index.js";
import { fileListInput, fileListOutput } from "./wire.js";

const TYPE_LETTERS = { directory: "d", symlink: "l", file: "-", other: "?" } as const;

export const listFiles = defineOperation({
  id: "files.list",
  summary: "List a directory of the session's workspace",
  scope: "files",
  effects: ["read"],
  input: fileListInput,
  output: fileListOutput,
  async run(host: { engine: Engine }, input, call) {
    const listing = await host.engine.files.list(input.session_id, input.path, call.owner);
    return { path: listing.path, truncated: listing.truncated, entries: listing.entries.map(({ modifiedAt, ...entry }) => ({ ...entry, modified_at: modifiedAt })) };
  },
  surfaces: {
    mcp: {
      tool: "file_list",
      title: "List workspace files",
      description: "List a directory of a session's /workspace (not recursive).",
      text: (out) => {
        if (out.entries.length === 0) return `${out.path} is empty.`;
        const lines = out.entries.map((e) => `${TYPE_LETTERS[e.type]} ${String(e.size).padStart(10)} ${e.name}`);
        return `${out.path}:\n${lines.join("\n")}${out.truncated ? "\n(listing cut)" : ""}`;
      },
    },
    rest: { method: "get", path: "/sessions/:session_id/files", tag: "files", description: null },
    sandbox: null,
  },
});
