// A session started on demand: a call that names a session id gets the caller's live session, or
// a new one, with a note for the agent when an earlier session of that id had ended.

import type { EngineSessions } from "../../execution/index.js";

export interface OnDemandSession {
  /** The id, when the call named one. */
  sessionId?: string;
  /** Why the session is new though the agent used it before (its variables and files are gone). */
  note?: string;
}

/**
 * Starts (or reuses) the caller's session with this id. Ids a caller names are its own: another
 * caller's session with the same id is never touched, and its existence never shown; a
 * server-minted id reaches its session for whoever holds it.
 */
export function sessionOnDemand(sessions: EngineSessions, sessionId: string | undefined, owner: string): OnDemandSession {
  if (sessionId === undefined) return {};
  const opened = sessions.ensure(sessionId, owner);
  return { sessionId, ...(opened.endedBefore ? { note: `session ${sessionId} had ended (${opened.endedBefore}); a new, empty one was started with the same id` } : {}) };
}
