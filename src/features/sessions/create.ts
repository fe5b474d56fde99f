// sessions.create: a session started ahead of its first call, with an id of the caller's or a
// server-minted one, and variables for every call in it (REST only; MCP starts sessions on demand).

import { z } from "zod";
import type { Engine } from "../../execution/index.js";
import { defineOperation } from "../../operations/index.js";
import { sessionSchema, toWireSession } from "./wire.js";

export const createSessionInput = z
  .object({
    session_id: z.string().min(1).max(128).optional().describe("Id to use; a random one when omitted"),
    env: z
      .record(z.string())
      .optional()
      .describe("Environment variables of every call in the session (replacing any set before, for a live session); values of secret-looking names are masked in results"),
  })
  .strict();

export const createSession = defineOperation({
  id: "sessions.create",
  summary: "Start a session (or return the live one with this id)",
  scope: "sessions",
  effects: ["write"],
  input: createSessionInput,
  output: sessionSchema,
  async run(host: { engine: Engine }, input, call) {
    const { sessions } = host.engine;
    const options = input.env === undefined ? {} : { env: input.env };
    return toWireSession(input.session_id === undefined ? sessions.create(undefined, call.owner, options) : sessions.ensure(input.session_id, call.owner, options).info);
  },
  surfaces: {
    mcp: null,
    rest: { method: "post", path: "/sessions", tag: "sessions", status: 201 },
    sandbox: null,
  },
});
