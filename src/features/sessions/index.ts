// The sessions feature: the wire shape of a session, a session started on demand, and the operations declared on it.
export { createSession, createSessionInput } from "./create.js";
export { forkSession, forkSessionInput, forkSessionOutput } from "./fork.js";
export { getSession } from "./get.js";
export { listSessions } from "./list.js";
export { sessionOnDemand, type OnDemandSession } from "./on-demand.js";
export { stopSession } from "./stop.js";
export { getSessionsInput, getSessionsOutput, sessionSchema, stopSessionInput, stopSessionOutput, toWireSession } from "./wire.js";

import { createSession } from "./create.js";
import { forkSession } from "./fork.js";
import { getSession } from "./get.js";
import { listSessions } from "./list.js";
import { stopSession } from "./stop.js";

/** The operations of this feature, for the registry: MCP lists get_sessions, stop_session, fork_session in this order. */
export const sessionOperations = [listSessions, createSession, getSession, stopSession, forkSession] as const;
