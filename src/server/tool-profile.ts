// Tool profiles: which of sandgate's tools MCP lists (server.toolProfile). `full` lists every
// tool; `codemode` only what a code-writing agent needs, since code reaches the rest itself.

import type { ToolProfile } from "../config/index.js";
import type { ToolDefinition } from "./tool-definition.js";

/** The tools each profile lists over MCP, in order; undefined: every tool. */
const PROFILE_TOOLS: Record<ToolProfile, readonly string[] | undefined> = {
  full: undefined,
  codemode: ["execute_code", "search_tools"],
};

/**
 * The tools MCP offers under `profile`: listed and callable; a call to any other is refused as an
 * unknown tool. A definition's own `codemode` form (a shorter description, fewer arguments) stands in for it.
 */
export function profileTools(tools: ToolDefinition[], profile: ToolProfile): ToolDefinition[] {
  const names = PROFILE_TOOLS[profile];
  if (names === undefined) return tools;
  return names.flatMap((name) => {
    const tool = tools.find((t) => t.name === name);
    return tool ? [tool.codemode ?? tool] : [];
  });
}

/** Whether `profile` lists the tool named `name` (prompts and texts name only tools the agent sees). */
export function profileHas(profile: ToolProfile, name: string): boolean {
  return PROFILE_TOOLS[profile]?.includes(name) ?? true;
}
