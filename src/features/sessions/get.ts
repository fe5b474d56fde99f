// sessions.get: one of the caller's sessions (REST only; MCP's get_sessions takes a session_id).

import { z } from "zod";
import type { Engine } from "../../execution/index.js";
import { defineOperation } from "../../operations/index.js";
import { sessionSchema, toWireSession } from "./wire.js";

export const getSession = defineOperation({
  id: "sessions.get",
  summary: "Describe one session",
  scope: "sessions",
  effects: ["read"],
  input: z.object({ session_id: z.string().min(1) }).strict(),
  output: sessionSchema,
  async run(host: { engine: Engine }, input, call) {
    return toWireSession(host.engine.sessions.get(input.session_id, call.owner));
  },
  surfaces: {
    mcp: null,
    rest: { method: "get", path: "/sessions/:session_id", tag: "sessions" },
    sandbox: null,
  },
});
