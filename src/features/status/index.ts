// The status feature: what the server is and how it is doing, for people, probes and load balancers.
export { serverHealth, serverRoot, type StatusHost } from "./operations.js";

import { serverHealth, serverRoot } from "./operations.js";

/** The operations of this feature, for the registry: REST only, readable without an API key. */
export const statusOperations = [serverRoot, serverHealth] as const;
