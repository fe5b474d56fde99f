// Public surface of code mode: the owner of the upstream servers, the catalog and its tree, and
// the routing of sandboxed code's calls to upstream tools.
export { CodeMode } from "./code-mode.js";
export type { CodeModeOptions } from "./code-mode.js";
export { toolResultValue } from "./upstream-calls.js";
