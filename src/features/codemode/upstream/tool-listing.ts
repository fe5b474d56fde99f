// Following every page of an upstream's tools/list within caps: tools, bytes, pages and one deadline
// for the whole listing, so a server that pages forever or lists without end cannot exhaust memory.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { formatBytes } from "./bounded-fetch.js";
import { formatSeconds } from "./call-errors.js";

/** Pages of tools/list we follow before deciding the server loops. */
const MAX_TOOL_PAGES = 1000;

/** A listing broke a cap: the server's tool list cannot be used, retrying would only repeat it. */
export class ToolListLimitError extends Error {
  override readonly name = "ToolListLimitError";
}

export interface ToolListingLimits {
  server: string;
  /** Epoch ms by which the whole listing (every page) must be done. */
  deadline: number;
  /** What set the deadline, for the error text (`codeMode.connectTimeoutS`). */
  timeoutMs: number;
  maxTools: number;
  /** Tool definitions, all pages together, as serialized JSON. */
  maxBytes: number;
}

/** Every page of tools/list, or a ToolListLimitError naming the cap the server broke. */
export async function listAllTools(client: Client, limits: ToolListingLimits): Promise<Tool[]> {
  const { server, deadline, maxTools, maxBytes } = limits;
  const tools: Tool[] = [];
  const seen = new Set<string>();
  let bytes = 0;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw overtime(server, limits.timeoutMs);
    let result: Awaited<ReturnType<Client["listTools"]>>;
    try {
      result = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: remaining });
    } catch (error) {
      if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number)) throw overtime(server, limits.timeoutMs);
      throw error;
    }
    if (tools.length + result.tools.length > maxTools) {
      throw new ToolListLimitError(`upstream server \`${server}\` lists more than ${maxTools} tools (codeMode.maxToolsPerServer); sandgate refused its tool list`);
    }
    bytes += Buffer.byteLength(JSON.stringify(result.tools));
    if (bytes > maxBytes) {
      throw new ToolListLimitError(
        `upstream server \`${server}\` lists more than ${formatBytes(maxBytes)} of tool definitions (4 times codeMode.maxUpstreamMessageBytes); sandgate refused its tool list`,
      );
    }
    // One push per tool: spreading a huge page into push() overflows the call stack.
    for (const tool of result.tools) tools.push(tool);
    cursor = result.nextCursor;
    if (cursor === undefined) return tools;
    if (seen.has(cursor)) throw new ToolListLimitError(`upstream server \`${server}\` returned the tools/list cursor ${JSON.stringify(cursor.slice(0, 100))} twice`);
    seen.add(cursor);
  }
  throw new ToolListLimitError(`upstream server \`${server}\`'s tools/list did not end after ${MAX_TOOL_PAGES} pages`);
}

function overtime(server: string, timeoutMs: number): ToolListLimitError {
  return new ToolListLimitError(`upstream server \`${server}\` did not finish listing its tools within ${formatSeconds(timeoutMs)} (codeMode.connectTimeoutS)`);
}
