// The tools sandgate offers over MCP, derived from the declared operations, and how a call of one is
// parsed, found and answered (MCP content, or a SandgateError for a request that is itself wrong).

import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { unknownLanguageError } from "../execution/index.js";
import { isSandgateError, isToolResultCode, publicError, SandgateError } from "../errors/index.js";
import { cutName, nameSome } from "./client-names.js";
import type { ServerContext } from "./context.js";
import { withAliasesResolved, type AnyOperation } from "../operations/index.js";
import { operationTools } from "./operation-tools.js";
import { operations } from "./operations.js";
import { retryAfterOf } from "./retry-after.js";
import { toJsonSchema } from "./json-schema.js";
import type { ToolCallContext, ToolDefinition, ToolReply } from "./tool-definition.js";

export type { ToolCallContext, ToolDefinition, ToolReply };

/** Every tool, in the order tools/list shows them: the declared operations that appear on MCP, in the features' order. */
export function createTools(ctx: ServerContext): ToolDefinition[] {
  return operationTools(operations.list(), ctx);
}

const listed = new WeakMap<ToolDefinition, Tool>();

/** The MCP `tools/list` entry of a definition (built once; schemas do not change at run time). */
export function toMcpTool(tool: ToolDefinition): Tool {
  const cached = listed.get(tool);
  if (cached) return cached;
  const entry: Tool = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toJsonSchema(tool.input) as Tool["inputSchema"],
    outputSchema: toJsonSchema(tool.output) as Tool["outputSchema"],
    annotations: tool.annotations,
  };
  listed.set(tool, entry);
  return entry;
}

/** Parses arguments against the tool's schema; the error names the field and what was wrong. */
export function parseToolArguments(tool: Pick<ToolDefinition, "name" | "input" | "aliases">, given: unknown): Record<string, unknown> {
  const args = withAliasesResolved(given, tool.aliases);
  const parsed = tool.input.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  // A language that is not one of the enum's names and aliases is refused as the engine refuses it.
  const [only] = parsed.error.issues;
  if (parsed.error.issues.length === 1 && only?.code === "invalid_enum_value" && only.path.join(".") === "language") {
    throw unknownLanguageError(String((args as { language: unknown }).language));
  }
  const problems = parsed.error.issues.map((issue) => {
    const field = issue.path.join(".");
    if (issue.code === "unrecognized_keys") return `unknown argument ${nameSome(issue.keys)}`;
    return `${field || "arguments"}: ${issue.message}`;
  });
  const first = parsed.error.issues[0];
  // An unknown argument's issue sits on the object itself: the field is the key it names.
  const field = first?.code === "unrecognized_keys" ? [...first.path, cutName(first.keys[0] ?? "")].join(".") : (first?.path.join(".") ?? "");
  throw new SandgateError("INVALID_INPUT", `invalid arguments for tool ${tool.name}: ${problems.join("; ")}`, {
    data: { tool: tool.name, field },
  });
}

/** Parses arguments for `operation` as its tool named `name` parses them (its input schema, its aliases): REST bodies and the CLI refuse what MCP refuses, alike. */
export function parseOperationArguments(operation: Pick<AnyOperation<never>, "input" | "inputAliases">, name: string, args: unknown): Record<string, unknown> {
  return parseToolArguments({ name, input: operation.input, ...(operation.inputAliases ? { aliases: operation.inputAliases } : {}) }, args);
}

/** Finds a tool by name; an unknown name is UNKNOWN_TOOL listing the ones there are. */
export function findTool(tools: ToolDefinition[], name: string): ToolDefinition {
  const tool = tools.find((t) => t.name === name);
  if (tool) return tool;
  throw new SandgateError("UNKNOWN_TOOL", `unknown tool ${JSON.stringify(name)}; the tools are ${tools.map((t) => t.name).join(", ")}`, {
    data: { tool: name },
  });
}

/** Validates and runs a tool; every failure is thrown as it came (REST maps them to statuses). */
export async function runTool(tools: ToolDefinition[], name: string, args: unknown, call: ToolCallContext = {}): Promise<ToolReply> {
  const tool = findTool(tools, name);
  return tool.run(parseToolArguments(tool, args), call);
}

/**
 * Calls a tool the MCP way. Throws SandgateError for a request that is itself wrong (unknown
 * tool, bad arguments); returns a result with isError for what failed while doing the work.
 */
export async function callTool(tools: ToolDefinition[], name: string, args: unknown, call: ToolCallContext = {}): Promise<CallToolResult> {
  try {
    const reply = await runTool(tools, name, args, call);
    if (reply.images) {
      // The images go once, as image content; structuredContent without them stays small.
      const { images: _sent, ...structured } = reply.structured;
      const content = [{ type: "text" as const, text: reply.text }, ...reply.images.map((image) => ({ type: "image" as const, ...image }))];
      return { content, structuredContent: structured, ...(reply.isError ? { isError: true } : {}) };
    }
    const resources = (reply.resources ?? []).map((resource) => ({ type: "resource" as const, resource }));
    return { content: [{ type: "text", text: reply.text }, ...resources], structuredContent: reply.structured, ...(reply.isError ? { isError: true } : {}) };
  } catch (error) {
    if (isSandgateError(error) && isToolResultCode(error.code)) {
      const retry = retryAfterOf(error);
      return { content: [{ type: "text", text: `${publicError(error).message} [${error.code}${retry === undefined ? "" : `, retry after ${retry} s`}]` }], isError: true };
    }
    throw error;
  }
}
