// Tool profiles: which of sandgate's tools MCP lists (server.toolProfile). `full` lists every
// tool; `codemode` only what a code-writing agent needs (execute_code and search_tools), since code
// reaches the rest itself. A tool is in the codemode profile when its definition has a codemode form.

import type { ToolProfile } from "../config/index.js";
import type { ToolDefinition } from "./tool-definition.js";

/**
 * The tools MCP offers under `profile`, in order: listed and callable; a call to any other is
 * refused as an unknown tool. Under codemode, a tool's codemode form (a shorter description, fewer
 * arguments) stands in for it.
 */
export function profileTools(tools: ToolDefinition[], profile: ToolProfile): ToolDefinition[] {
  if (profile === "full") return tools;
  return tools.flatMap((tool) => (tool.codemode ? [tool.codemode] : []));
}
