// The code mode feature's discovery: what sandboxed code can call upstream, searched and listed.
export { listServers, searchTools, type CodemodeHost } from "./operations.js";

import { listServers, searchTools } from "./operations.js";

/** The operations of this feature, for the registry: search_tools then list_servers on MCP; GET /servers on REST. */
export const codemodeOperations = [searchTools, listServers] as const;
