// The sessions feature: the wire shape of a session and the operations declared on it.
export { forkSession, forkSessionInput, forkSessionOutput } from "./fork.js";
export { getSessionsInput, getSessionsOutput, sessionSchema, stopSessionInput, stopSessionOutput, toWireSession } from "./wire.js";

import { forkSession } from "./fork.js";

/** The operations of this feature, for the registry. */
export const sessionOperations = [forkSession] as const;
