// sessions.fork: a new session holding a copy of one of the caller's sessions' workspace and
// variables, for trying something risky on a copy or branching one analysis two ways.

import { z } from "zod";
import type { Engine } from "../../execution/index.js";
import { defineOperation } from "../../operations/index.js";
import { sessionSchema, toWireSession } from "./wire.js";

const SESSION_ID = z.string().min(1).max(128);

export const forkSessionInput = z
  .object({
    session_id: SESSION_ID.describe("The session to copy"),
    new_session_id: SESSION_ID.optional().describe("Id for the new session; random when omitted"),
  })
  .strict();

export const forkSessionOutput = sessionSchema.extend({
  forked_from: z.string().describe("The session whose workspace was copied"),
  copied: z
    .object({
      files: z.number().int(),
      directories: z.number().int(),
      links: z.number().int().describe("Symbolic links, copied as links (never followed)"),
      fifos: z.number().int(),
      skipped: z.number().int().describe("Sockets, and files or directories the sandbox user cannot read"),
      bytes: z.number().int(),
    })
    .describe("What the copy of the workspace held"),
});

export const forkSession = defineOperation({
  id: "sessions.fork",
  summary: "Start a new session holding a copy of a session's workspace and variables (not its interpreter state)",
  scope: "sessions",
  effects: ["read", "write"],
  input: forkSessionInput,
  output: forkSessionOutput,
  async run(host: { engine: Engine }, input, call) {
    const { info, copied } = await host.engine.sessions.fork(input.session_id, call.owner, input.new_session_id === undefined ? {} : { id: input.new_session_id });
    return { ...toWireSession(info), forked_from: input.session_id, copied };
  },
  surfaces: {
    mcp: {
      tool: "fork_session",
      title: "Fork a session",
      description: "Start a new session with a copy of a session's /workspace and environment variables; interpreter state starts fresh and the original is untouched.",
      text: (out) =>
        `Session ${out.session_id} is a fork of ${out.forked_from}: ${out.copied.files} files, ${out.copied.directories} directories and ${out.copied.links} links copied (${out.copied.bytes} bytes)` +
        (out.copied.skipped > 0 ? `; ${out.copied.skipped} entries the sandbox user cannot read were skipped` : "") +
        ". Interpreter state starts fresh.",
    },
    rest: { method: "post", path: "/sessions/:session_id/fork", tag: "sessions", status: 201 },
    sandbox: null,
  },
});
