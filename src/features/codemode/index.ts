// The code mode feature: the owner of the upstream servers (upstream/), the catalog of their tools
// and its generated tree (catalog/), and the routing of sandboxed code's upstream calls (the domain);
// its discovery operations, what sandboxed code can call upstream, searched and listed.

// The domain.
export { CodeMode } from "./code-mode.js";
export type { CodeModeOptions } from "./code-mode.js";
export { unavailableServer } from "./discovery.js";
export type { DiscoveredServer, DiscoveredTool, DiscoverySource, PolicyMark, SearchArgs } from "./discovery.js";
export type { Catalog } from "./catalog/index.js";
export type { UpstreamState, UpstreamStatus } from "./upstream/index.js";

// The operations.
export { listServers, searchTools, type CodemodeHost } from "./operations.js";
export { getMcpToolDetails, listMcpTools } from "./tool-listing.js";

import { listServers, searchTools } from "./operations.js";
import { getMcpToolDetails, listMcpTools } from "./tool-listing.js";

/**
 * The operations of this feature, for the registry: search_tools then list_servers on MCP; GET /servers
 * and GET /tools on REST; in code also every tool by name and one tool's definition.
 */
export const codemodeOperations = [searchTools, listServers, listMcpTools, getMcpToolDetails] as const;
