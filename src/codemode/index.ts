// Public surface of code mode: the owner of the upstream servers, the catalog and its tree, and
// the routing of sandboxed code's upstream calls (what other folders use; the rest is internal).
export { CodeMode } from "./code-mode.js";
export type { CodeModeOptions } from "./code-mode.js";
export { listServers, searchArgsShape, searchTools, unavailableServer } from "./discovery.js";
export type { DiscoveredServer, DiscoveredTool, DiscoverySource, PolicyMark, SearchArgs } from "./discovery.js";
