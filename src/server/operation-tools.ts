// MCP tools derived from declared operations: the tool's name, title, description and text come
// from the operation's MCP surface, its schemas and scope from the operation, and its hints from
// the operation's effects.

import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { LOCAL_OWNER } from "../execution/index.js";
import { descriptionFor, inputWithout, runOperation, type AnyOperation, type Effect } from "../operations/index.js";
import { defineTool, type ToolDefinition } from "./tool-definition.js";

/**
 * MCP's tool hints, as the effects say: read-only when it only reads, destructive when it deletes.
 * A read-only operation says nothing of the other two unless declared idempotent, when it says both.
 */
export function annotationsOf(title: string, effects: readonly Effect[], idempotent = false): ToolAnnotations {
  const readOnly = effects.every((effect) => effect === "read");
  return {
    title,
    readOnlyHint: readOnly,
    ...(readOnly && !idempotent ? {} : { destructiveHint: effects.includes("delete"), idempotentHint: idempotent }),
    openWorldHint: effects.includes("network"),
  };
}

/** The tools of the operations that appear on MCP, bound to `host`. */
export function operationTools<Host>(operations: readonly AnyOperation<Host>[], host: Host): ToolDefinition[] {
  const tools: ToolDefinition[] = [];
  for (const operation of operations) {
    const mcp = operation.surfaces.mcp;
    if (!mcp) continue;
    const { scope } = operation;
    // On MCP a key scope decides what tools/list shows a key; "any" and "public" are for REST's status routes.
    if (scope === "any" || scope === "public") throw new Error(`operation ${operation.id}: an MCP tool needs an API key scope, not "${scope}"`);
    const tool = defineTool({
      name: mcp.tool,
      scope,
      title: mcp.title,
      description: descriptionFor(mcp.description, host),
      input: operation.input,
      ...(operation.inputAliases ? { aliases: operation.inputAliases } : {}),
      output: mcp.outputSchema ?? operation.output,
      annotations: annotationsOf(mcp.title, operation.effects, operation.idempotent),
      async run(args, call) {
        const { owner, ...rest } = call;
        const output = await runOperation(operation, host, args, { owner: owner ?? LOCAL_OWNER, ...rest });
        const { structured, ...extras } = mcp.extras?.(output, args, host) ?? {};
        return { structured: structured ?? output, text: mcp.text(output, args, host), ...extras };
      },
    });
    if (mcp.codemode === true) tool.codemode = tool;
    else if (mcp.codemode) {
      const { description, omit = [] } = mcp.codemode;
      tool.codemode = { ...tool, description: descriptionFor(description ?? mcp.description, host), input: inputWithout(operation, omit, "the codemode profile") };
    }
    tools.push(tool);
  }
  return tools;
}
