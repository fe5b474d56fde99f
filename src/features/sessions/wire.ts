// Sessions on the wire: a session as every surface shows it, and the snake_case arguments and
// results of listing and stopping sessions.

import { z } from "zod";
import type { SessionInfo } from "../../execution/index.js";

export const sessionSchema = z.object({
  session_id: z.string(),
  owner: z.string().describe('The caller the session belongs to: "key:<name>", or "local" on a server without API keys'),
  shared: z
    .boolean()
    .describe("The server minted this id (POST /sessions without session_id): any caller holding it may use the session. Ids a caller names are that caller's alone"),
  created_at: z.string(),
  last_used_at: z.string(),
  expires_at: z.string().describe("When the session ends unless used again"),
  calls: z.number().int(),
  languages: z.array(z.string()).describe("Runners started in this session"),
  busy: z.boolean(),
  env_names: z.array(z.string()).describe("Names of the session's environment variables (their values are never shown)"),
});

export const getSessionsInput = z.object({ session_id: z.string().min(1).max(128).optional() }).strict();
export const getSessionsOutput = z.object({ sessions: z.array(sessionSchema) });
export const stopSessionInput = z.object({ session_id: z.string().min(1) }).strict();
export const stopSessionOutput = z.object({ session_id: z.string(), stopped: z.boolean() });

export function toWireSession(info: SessionInfo): z.infer<typeof sessionSchema> {
  return {
    session_id: info.id,
    owner: info.owner,
    shared: info.shared,
    created_at: info.createdAt,
    last_used_at: info.lastUsedAt,
    expires_at: info.expiresAt,
    calls: info.calls,
    languages: info.runners,
    busy: info.busy,
    env_names: info.envNames,
  };
}
