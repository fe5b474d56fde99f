// search_tools against the real reference MCP servers (memory, filesystem): at detail "full"
// signatures for the tools named or the few best only, the rest by name, every identical type once.

import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCodeModeStack, type CodeModeStack } from "../fixtures/code-mode-stack.js";
import { callTool, toolText } from "../fixtures/mcp-client.js";

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
  it("gives signatures for the best matches only, the others by name with how to get theirs", async () => {
    const { text, hits } = await search({ query: "create entities in the knowledge graph", detail: "full" });
    expect(hits[0]?.id).toBe("memory.create_entities");
    expect(hits.length).toBeGreaterThan(5);
    const full = hits.filter((h) => h.signature !== undefined);
    expect(full.length).toBeGreaterThanOrEqual(1);
    expect(full.length).toBeLessThanOrEqual(3);
    // The best come first with their Python line; every other hit keeps its summary in the data and is a name in the text.
    expect(hits.slice(0, full.length).every((h) => h.signature !== undefined && h.python !== undefined)).toBe(true);
    expect(hits.slice(full.length).every((h) => h.signature === undefined && h.python === undefined && h.summary)).toBe(true);
    for (const h of hits.slice(full.length)) expect(text).not.toContain(h.summary);
    expect(text.match(/declare function/g)).toHaveLength(full.length);
    expect(text).toContain("declare function createEntities(input: CreateEntitiesInput): Promise<CreateEntitiesOutput>; // Python: await create_entities(**input)");
    const rest = hits.slice(full.length);
    // Grouped by server: `memory: a, b; filesystem: c`.
    const also = /^Also matching \(search a name for its signature\): (.*)$/m.exec(text)?.[1] ?? "";
    const named = also.split("; ").flatMap((group) => {
      const [server, names = ""] = group.split(": ");
      return names.split(", ").map((name) => `${server}.${name}`);
    });
    expect(named.sort()).toEqual(rest.map((h) => h.id).sort());
    // The generated boilerplate is gone: the header line names the tool already, the title repeats the name.
    expect(text).not.toMatch(/Tool id:|\/\*\* Input of |Create Entities|^export /m);
  });

  it("signs exactly the tools the query names, and not a deprecated one it does not name", async () => {
    const { text, hits } = await search({ query: "list directory read text file write file", detail: "full", server: "filesystem" });
    const signed = hits.filter((h) => h.signature !== undefined).map((h) => h.id);
    expect(signed.sort()).toEqual(["filesystem.list_directory", "filesystem.read_text_file", "filesystem.write_file"]);
    expect(hits.map((h) => h.id)).toContain("filesystem.read_file");
    expect(text).toMatch(/^\/\/ filesystem\.list_directory$/m);
    expect(text).not.toMatch(/^\/\/ filesystem\.read_file$/m);

    const byId = await search({ query: "memory.create_relations", detail: "full" });
    expect(byId.hits.filter((h) => h.signature !== undefined).map((h) => h.id)).toEqual(["memory.create_relations"]);
  });

  it("signs a tool whose description says it is deprecated only after the others", async () => {
    const { hits } = await search({ query: "read the contents of a file as text", detail: "full", server: "filesystem" });
    const readFile = hits.findIndex((h) => h.id === "filesystem.read_file");
    expect(readFile).toBeGreaterThanOrEqual(0);
    expect(readFile).toBeLessThan(3);
    expect(hits[readFile]?.signature).toBeUndefined();
    expect(hits.some((h) => h.signature !== undefined)).toBe(true);
    // Named, it is signed like any other.
    const named = await search({ query: "read_file", detail: "full", server: "filesystem" });
    expect(named.hits[0]).toMatchObject({ id: "filesystem.read_file", signature: expect.stringContaining("DEPRECATED") });
  });

  it("prints a type once when a tool's output type equals its input type", async () => {
    const { text, hits } = await search({ query: "create_entities", detail: "full", limit: 1, server: "memory" });
    // The generated declaration has both, in full.
    expect(hits[0]?.signature).toMatch(/export interface CreateEntitiesInput \{[\s\S]*export interface CreateEntitiesOutput \{/);
    expect(text.match(/entityType: string;/g)).toHaveLength(1);
    expect(text).toContain("type CreateEntitiesOutput = CreateEntitiesInput;");
    expect(text).toContain("Promise<CreateEntitiesOutput>");
  });

  it("with an explicit limit gives every hit in full", async () => {
    const { text, hits } = await search({ query: "read file", detail: "full", limit: 4 });
    expect(hits).toHaveLength(4);
    expect(hits.every((h) => h.signature !== undefined && h.python !== undefined)).toBe(true);
    expect(text.match(/declare function/g)).toHaveLength(4);
    expect(text).not.toContain("Also matching");
  });
});

describe("search_tools with detail summary", () => {
  it("without a limit gives at most five hits, none far below the best; a limit is exact", async () => {
    const wide = await search({ query: "knowledge graph entities relations" });
    expect(wide.hits.length).toBe(5);
    expect(wide.text.split("\n")).toHaveLength(5);
    const narrow = await search({ query: "write file" });
    expect(narrow.hits.map((h) => h.id)).toEqual(["filesystem.write_file"]);
    const limited = await search({ query: "write file", limit: 7 });
    expect(limited.hits).toHaveLength(7);
    expect(limited.hits.every((h) => h.summary)).toBe(true);
  });

  it("gives code in the sandbox the same hits as the agent", async () => {
    const r = await stack!.engine.execute({
      language: "python",
      code: "import json\nfrom sandgate import search_tools\nprint(json.dumps([[h['id'], 'signature' in h] for h in await search_tools('list directory read text file write file', detail='full', server='filesystem')]))",
    });
    expect(r.status, r.stderr).toBe("ok");
    const fromCode = JSON.parse(r.stdout) as [string, boolean][];
    const { hits } = await search({ query: "list directory read text file write file", detail: "full", server: "filesystem" });
    expect(fromCode).toEqual(hits.map((h) => [h.id, h.signature !== undefined]));
    const summary = await stack!.engine.execute({ language: "python", code: "from sandgate import search_tools\nprint(len(await search_tools('write file')))" });
    expect(summary.stdout.trim()).toBe("1");
  });
});
