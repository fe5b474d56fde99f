// sessions.stop: one of the caller's sessions ended, its sandboxes and /workspace deleted.

import type { Engine } from "../../execution/index.js";
import { defineOperation } from "../../operations/index.js";
import { stopSessionInput, stopSessionOutput } from "./wire.js";

export const stopSession = defineOperation({
  id: "sessions.stop",
  summary: "Stop a session and delete its workspace",
  scope: "sessions",
  effects: ["delete"],
  idempotent: true,
  input: stopSessionInput,
  output: stopSessionOutput,
  async run(host: { engine: Engine }, input, call) {
    await host.engine.sessions.stop(input.session_id, call.owner);
    return { session_id: input.session_id, stopped: true };
  },
  surfaces: {
    mcp: {
      tool: "stop_session",
      title: "Stop a session",
      description: "Stop a session when done: its sandboxes and /workspace files are deleted.",
      text: (out) => `Session ${out.session_id} stopped; its workspace was deleted.`,
    },
    rest: { method: "delete", path: "/sessions/:session_id", tag: "sessions", description: null },
    sandbox: null,
  },
});
