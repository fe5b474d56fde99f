// sessions.list: the caller's live sessions, or one of them (MCP get_sessions; REST GET /sessions,
// which lists them all).

import type { Engine } from "../../execution/index.js";
import { defineOperation } from "../../operations/index.js";
import { getSessionsInput, getSessionsOutput, toWireSession } from "./wire.js";

export const listSessions = defineOperation({
  id: "sessions.list",
  summary: "List your live sessions (each caller sees only its own)",
  scope: "sessions",
  effects: ["read"],
  input: getSessionsInput,
  output: getSessionsOutput,
  async run(host: { engine: Engine }, input, call) {
    const { sessions } = host.engine;
    return { sessions: (input.session_id === undefined ? sessions.list(call.owner) : [sessions.get(input.session_id, call.owner)]).map(toWireSession) };
  },
  surfaces: {
    mcp: {
      tool: "get_sessions",
      title: "List sessions",
      description: "List your live sessions (created, last used, expiry, calls, languages), or describe one.",
      text: (out) => (out.sessions.length === 0 ? "No live sessions. Pass a new session_id to execute_code to start one." : JSON.stringify(out, null, 2)),
    },
    // GET /sessions/{session_id} describes one session; the list route takes no filter.
    rest: { method: "get", path: "/sessions", tag: "sessions", description: null, omits: ["session_id"] },
    sandbox: null,
  },
});
