// Public surface of the upstream module: MCP client connections to upstream servers.
// Everything else in this folder is internal.
export { UpstreamManager } from "./manager.js";
export type { ToolsChangedListener } from "./manager.js";
export type { CallOptions, UpstreamManagerOptions, UpstreamState, UpstreamStatus, UpstreamTransportKind } from "./types.js";
