// What an MCP tool of sandgate's is: schemas, description, annotations and a handler, as
// operation-tools.ts derives them from the declared operations.

import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { Scope } from "../config/index.js";
import type { Approver } from "../features/governance/index.js";
import type { OutputStream } from "../sandbox/index.js";

/** What a running tool call may use besides its arguments. */
export interface ToolCallContext {
  /** Aborted when the client cancels or disconnects; running code is stopped. */
  signal?: AbortSignal;
  /** Receives output while code runs (MCP logging/progress, REST server-sent events). */
  onOutput?: (stream: OutputStream, text: string) => void;
  /**
   * The verified identity of the caller (see server/http/caller.ts): sessions and files are only
   * ever looked up among its own. Library callers that leave it out act as "local".
   */
  owner?: string;
  /** Asks the calling client when the run or a tool call needs approval (MCP elicitation); absent: the approvals queue. */
  approver?: Approver;
  /** Receives "waiting for approval ..." while the call waits for a person (MCP progress). */
  onWaiting?: (message: string) => void;
}

export interface ToolReply {
  structured: Record<string, unknown>;
  text: string;
  isError?: boolean;
  /** Images to send as MCP image content after the text; the structured result then leaves out its `images`. */
  images?: Array<{ mimeType: string; data: string }>;
  /** Embedded resources (a binary file's blob) to send as MCP resource content after the text. */
  resources?: Array<{ uri: string; mimeType: string; blob: string }>;
}

export interface ToolDefinition {
  name: string;
  /** What an API key needs to list and call the tool (server.keyScopes). */
  scope: Scope;
  title: string;
  description: string;
  input: z.AnyZodObject;
  /** Other names of input fields, accepted and never listed (the operation's inputAliases). */
  aliases?: Readonly<Record<string, string>>;
  output: z.AnyZodObject;
  annotations: ToolAnnotations;
  run(args: Record<string, unknown>, call: ToolCallContext): Promise<ToolReply>;
  /** The tool as the codemode profile lists it (see tool-profile.ts): itself, a shorter form, or absent when that profile leaves it out. */
  codemode?: ToolDefinition;
}

export function defineTool<I extends z.AnyZodObject, O extends z.AnyZodObject>(tool: {
  name: string;
  scope: Scope;
  title: string;
  description: string;
  input: I;
  aliases?: Readonly<Record<string, string>>;
  output: O;
  annotations: ToolAnnotations;
  run(args: z.infer<I>, call: ToolCallContext): Promise<{ structured: z.infer<O>; text: string; isError?: boolean; images?: ToolReply["images"]; resources?: ToolReply["resources"] }>;
}): ToolDefinition {
  return tool;
}

