// Upstream tool lists made into catalog entries: validated, de-duplicated, named and namespaced.
// Upstream servers are untrusted; a malformed tool is dropped rather than breaking its whole server.

import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { SandgateError } from "../../../errors/index.js";
import { toolIdentifiers } from "./naming.js";
import type { CatalogTool } from "./types.js";

export const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const toolSchema = z
  .object({
    name: z.string().min(1).max(512),
    title: z.string().optional(),
    description: z.string().optional(),
    inputSchema: z.record(z.unknown()),
    outputSchema: z.record(z.unknown()).optional(),
    annotations: z.record(z.unknown()).optional(),
  })
  .passthrough();

export function checkServerName(server: unknown): string {
  if (typeof server !== "string" || !SERVER_NAME.test(server)) {
    throw new SandgateError("INVALID_INPUT", `server name ${JSON.stringify(server)} is invalid: use 1-64 letters, digits, \`_\` or \`-\``, {
      data: { server },
    });
  }
  return server;
}

/**
 * Catalog entries for a server's tools in upstream order. Inferred output schemas from `previous`
 * survive a re-listing as long as the tool still declares none.
 */
export function catalogTools(server: string, tools: readonly Tool[], previous: readonly CatalogTool[] = []): CatalogTool[] {
  const seen = new Set<string>();
  const valid: z.infer<typeof toolSchema>[] = [];
  for (const tool of tools) {
    const parsed = toolSchema.safeParse(tool);
    if (!parsed.success || seen.has(parsed.data.name)) continue;
    seen.add(parsed.data.name);
    valid.push(parsed.data);
  }
  const inferred = new Map(previous.filter((t) => t.outputSchemaInferred).map((t) => [t.name, t.outputSchema]));
  const ids = toolIdentifiers(valid.map((t) => t.name));
  return valid.map((tool, i) => {
    const names = ids[i] ?? { tsName: "tool", pyName: "tool" };
    const declared = tool.outputSchema === undefined ? undefined : structuredClone(tool.outputSchema);
    const kept = declared === undefined ? inferred.get(tool.name) : undefined;
    const entry: CatalogTool = {
      id: `${server}.${tool.name}`,
      server,
      name: tool.name,
      tsName: names.tsName,
      pyName: names.pyName,
      description: tool.description ?? "",
      inputSchema: structuredClone(tool.inputSchema),
      outputSchemaInferred: kept !== undefined,
    };
    if (tool.title !== undefined) entry.title = tool.title;
    const outputSchema = declared ?? kept;
    if (outputSchema !== undefined) entry.outputSchema = outputSchema;
    if (tool.annotations !== undefined) entry.annotations = structuredClone(tool.annotations);
    return entry;
  });
}
