// search_tools with detail "full" against the real reference MCP servers (memory, filesystem):
// signatures for the few best matches only, the rest as summaries, every identical type once.

import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCodeModeStack, type CodeModeStack } from "./fixtures/code-mode-stack.js";
import { callTool, toolText } from "./fixtures/mcp-client.js";

const PKG = join(process.cwd(), "node_modules/@modelcontextprotocol");

let dir: string;
let stack: CodeModeStack | undefined;

interface Hit {
  id: string;
  summary?: string;
  signature?: string;
  python?: string;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-search-full-"));
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, "files"));
  stack = await startCodeModeStack(dir, {
    servers: {
      filesystem: { command: process.execPath, args: [join(PKG, "server-filesystem/dist/index.js"), join(dir, "files")] },
      memory: { command: process.execPath, args: [join(PKG, "server-memory/dist/index.js")], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } },
    },
    pool: { python: 0, javascript: 0, bash: 0 },
    name: "search-full-test",
  });
});

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

const search = async (args: Record<string, unknown>): Promise<{ text: string; hits: Hit[] }> => {
  const result = await callTool(stack!.client, "search_tools", args);
  return { text: toolText(result), hits: result.structuredContent.tools as Hit[] };
};

describe("search_tools with detail full", () => {
  it("gives signatures for the best matches only, the others as one-line summaries with how to get theirs", async () => {
    const { text, hits } = await search({ query: "create entities in the knowledge graph", detail: "full" });
    expect(hits[0]?.id).toBe("memory.create_entities");
    expect(hits.length).toBeGreaterThan(5);
    const full = hits.filter((h) => h.signature !== undefined);
    expect(full.length).toBeGreaterThanOrEqual(1);
    expect(full.length).toBeLessThanOrEqual(3);
    // The best come first; every other hit keeps its summary, and the Python line stays with each signature.
    expect(hits.slice(0, full.length).every((h) => h.signature !== undefined && h.python !== undefined)).toBe(true);
    expect(hits.slice(full.length).every((h) => h.signature === undefined && h.python === undefined && h.summary)).toBe(true);
    expect(text.match(/export declare function/g)).toHaveLength(full.length);
    expect(text).toMatch(/# Python: async def create_entities\(/);
    expect(text).toMatch(/Also matching \(for their signatures, search their names with detail "full", or pass a limit\):\n/);
    for (const rest of hits.slice(full.length)) expect(text).toContain(`${rest.id} — ${rest.summary}`);
    // The generated boilerplate is gone: the header line names the tool already.
    expect(text).not.toMatch(/Tool id:|\/\*\* Input of /);
  });

  it("prints a type once when a tool's output type equals its input type", async () => {
    const { text, hits } = await search({ query: "create_entities", detail: "full", limit: 1, server: "memory" });
    // The generated declaration has both, in full.
    expect(hits[0]?.signature).toMatch(/export interface CreateEntitiesInput \{[\s\S]*export interface CreateEntitiesOutput \{/);
    expect(text.match(/entityType: string;/g)).toHaveLength(1);
    expect(text).toContain("export type CreateEntitiesOutput = CreateEntitiesInput;");
    expect(text).toContain("Promise<CreateEntitiesOutput>");
  });

  it("with an explicit limit gives every hit in full", async () => {
    const { text, hits } = await search({ query: "read file", detail: "full", limit: 4 });
    expect(hits).toHaveLength(4);
    expect(hits.every((h) => h.signature !== undefined && h.python !== undefined)).toBe(true);
    expect(text.match(/export declare function/g)).toHaveLength(4);
    expect(text).not.toContain("Also matching");
  });
});
