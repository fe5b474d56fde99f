// Discovery from inside the sandbox: sandboxed Python, JavaScript, TypeScript and Bash search the
// tool catalog and list the upstream servers of real MCP servers, through the real server's execute_code,
// with the functions generated from the operations' sandbox surfaces (runners/sandgate_ops.py, node_ops.cjs, sandgate_ops.sh).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCodeModeStack, type CodeModeStack } from "../fixtures/code-mode-stack.js";
import { callTool } from "../fixtures/mcp-client.js";

const PKG = join(process.cwd(), "node_modules/@modelcontextprotocol");

interface WireResult {
  status: string;
  stdout: string;
  stderr: string;
  error?: { type: string; message: string };
  tool_calls?: unknown[];
}

let dir: string;
let stack: CodeModeStack | undefined;

async function run(language: string, code: string): Promise<WireResult> {
  const result = await callTool(stack!.client, "execute_code", { language, code });
  return result.structuredContent as unknown as WireResult;
}

/** The JSON the code printed on its last line of output. */
function printed(result: WireResult): unknown {
  const lines = result.stdout.trim().split("\n");
  try {
    return JSON.parse(lines[lines.length - 1] ?? "") as unknown;
  } catch {
    throw new Error(`no JSON on the last line: ${JSON.stringify(result)}`);
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-discovery-"));
  stack = await startCodeModeStack(dir, {
    servers: {
      everything: { command: process.execPath, args: [join(PKG, "server-everything/dist/index.js"), "stdio"] },
      memory: { command: process.execPath, args: [join(PKG, "server-memory/dist/index.js")], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } },
    },
    codeMode: { maxToolCallsPerExecution: 30 },
    toolPolicy: { default: "allow", rules: { "memory.delete_entities": "deny", "memory.create_entities": "approve" } },
    pool: { python: 1, javascript: 1, bash: 1 },
    name: "discovery-test",
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Code per language that prints one JSON line: searches, listings and a refused search. */
const CODE = {
  python: {
    search: 'import json\nprint(json.dumps(await search_tools("delete entities knowledge graph", limit=3)))',
    full: 'import json\nfrom sandgate import search_tools\nprint(json.dumps(await search_tools("tiny image", detail="full", limit=1)))',
    servers: "import json\nprint(json.dumps(await list_servers()))",
    badLimit: 'try:\n    await search_tools("entities", limit=500)\nexcept ToolError as e:\n    print(e.kind + ": " + str(e))',
  },
  javascript: {
    search: 'console.log(JSON.stringify(await searchTools("delete entities knowledge graph", { limit: 3 })))',
    full: 'console.log(JSON.stringify(await searchTools("tiny image", { detail: "full", limit: 1 })))',
    servers: "console.log(JSON.stringify(await listServers()))",
    badLimit: 'try { await searchTools("entities", { limit: 500 }) } catch (e) { console.log(`${e.kind}: ${e.message}`) }',
  },
  typescript: {
    search: 'const hits: Array<{ id: string }> = await searchTools("delete entities knowledge graph", { limit: 3 });\nconsole.log(JSON.stringify(hits))',
    full: 'const hits: unknown[] = await searchTools("tiny image", { detail: "full", limit: 1 });\nconsole.log(JSON.stringify(hits))',
    servers: "const servers: unknown = await listServers();\nconsole.log(JSON.stringify(servers))",
    badLimit: 'try { await searchTools("entities", { limit: 500 }) } catch (e: any) { console.log(`${e.kind}: ${e.message}`) }',
  },
  bash: {
    search: "sandgate-tool --search 'delete entities knowledge graph' --limit 03",
    full: "sandgate-tool --search 'tiny image' --detail full --limit 1",
    servers: "sandgate-tool --servers",
    badLimit: "sandgate-tool --search entities --limit 500; echo \"status $?\"",
  },
} as const;

interface Hit {
  id: string;
  server: string;
  name: string;
  score: number;
  summary?: string;
  signature?: string;
  python?: string;
  policy?: string;
}

describe.each(Object.keys(CODE) as Array<keyof typeof CODE>)("%s code", (language) => {
  const code = CODE[language];

  it("finds a tool by words, with the tool policy's marks, and makes no upstream call doing so", async () => {
    const result = await run(language, code.search);
    expect(result.status, JSON.stringify(result)).toBe("ok");
    const hits = printed(result) as Hit[];
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.length).toBeLessThanOrEqual(3);
    const top = hits[0]!;
    expect(top).toMatchObject({ id: "memory.delete_entities", server: "memory", name: "delete_entities", policy: "deny" });
    expect(typeof top.summary).toBe("string");
    expect(typeof top.score).toBe("number");
    expect(result.tool_calls ?? []).toEqual([]);
  });

  it("returns a TypeScript signature and the Python line with detail full", async () => {
    const hits = printed(await run(language, code.full)) as Hit[];
    expect(hits).toHaveLength(1);
    expect(hits[0]!.id).toBe("everything.get-tiny-image");
    expect(hits[0]!.signature).toMatch(/function|=>|\(/);
    expect(hits[0]!.python).toMatch(/def /);
  });

  it("lists the servers with their state, tool counts and modules", async () => {
    const servers = printed(await run(language, code.servers)) as Array<Record<string, unknown>>;
    const names = servers.map((s) => s.name).sort();
    expect(names).toEqual(["everything", "memory"]);
    for (const s of servers) {
      expect(s.state).toBe("ready");
      expect(s.tool_count).toBeGreaterThan(3);
    }
    expect(servers.find((s) => s.name === "memory")).toMatchObject({ ts_module: "sandgate:servers/memory", py_module: "servers.memory" });
  });

  it("refuses a search with a limit over 50 with a clear error in the language's way", async () => {
    const result = await run(language, code.badLimit);
    if (language === "bash") {
      expect(result.stdout).toContain("status 2");
      expect(result.stderr).toContain("sandgate-tool: search_tools failed: limit must be a whole number from 1 to 50");
    } else {
      expect(result.stdout).toContain("InvalidArguments: tool `search_tools` failed: limit must be a whole number from 1 to 50");
    }
  });
});

it("Python code gets an error naming the unknown server it searched", async () => {
  const result = await run("python", 'try:\n    await search_tools("entities", server="nope")\nexcept ToolError as e:\n    print(e.kind, e.message)');
  expect(result.stdout).toMatch(/^InvalidArguments no upstream server `nope` \(servers: (everything, memory|memory, everything)\)/);
});

it("JavaScript code that searches in a loop is stopped at the execution's limit, not the host", async () => {
  const result = await run(
    "javascript",
    'let n = 0;\ntry { for (;;) { await searchTools("entities", { detail: "name", limit: 1 }); n++ } } catch (e) { console.log(`${n} ${e.kind}`) }',
  );
  expect(result.stdout.trim()).toBe("30 ToolLimit");
});

it("a tool marked approve by the policy says so in a search from Bash", async () => {
  const hits = printed(await run("bash", "sandgate-tool --search 'create entities' --detail name --limit 1")) as Hit[];
  expect(hits).toEqual([{ id: "memory.create_entities", server: "memory", name: "create_entities", score: expect.any(Number), policy: "approve" }]);
});

describe("the code-execution template's helpers: list_mcp_tools, get_mcp_tool_details and callMCPTool with server__tool names", () => {
  const template = {
    javascript: [
      "const tools = await list_mcp_tools();",
      "const details = await get_mcp_tool_details('memory__search_nodes');",
      "const found = await callMCPTool('memory__search_nodes', { query: 'nobody' });",
      "let missing; try { await get_mcp_tool_details('memory__nope'); } catch (e) { missing = e.kind; }",
      "console.log(JSON.stringify({ names: tools.map((t) => t.name), marked: tools.filter((t) => t.policy).map((t) => [t.name, t.policy]), details, found: typeof found, missing }));",
    ].join("\n"),
    python: [
      "import json",
      "tools = await list_mcp_tools()",
      "details = await get_mcp_tool_details('memory__search_nodes')",
      "found = await callMCPTool('memory__search_nodes', {'query': 'nobody'})",
      "try:",
      "    await get_mcp_tool_details('memory__nope')",
      "except ToolError as e:",
      "    missing = e.kind",
      "print(json.dumps({'names': [t['name'] for t in tools], 'marked': [[t['name'], t['policy']] for t in tools if t.get('policy')], 'details': details, 'found': type(found).__name__, 'missing': missing}))",
    ].join("\n"),
  };

  it.each(Object.keys(template) as Array<keyof typeof template>)("work in %s: every tool by server__tool name with its policy, one tool's schemas, and the call", async (language) => {
    const result = await run(language, template[language]);
    expect(result.status, JSON.stringify(result)).toBe("ok");
    const out = printed(result) as { names: string[]; marked: string[][]; details: Record<string, unknown>; found: string; missing: string };
    expect(out.names).toEqual(expect.arrayContaining(["memory__read_graph", "memory__search_nodes", "everything__echo"]));
    expect(out.marked).toEqual(expect.arrayContaining([["memory__delete_entities", "deny"], ["memory__create_entities", "approve"]]));
    expect(out.details).toMatchObject({ name: "memory__search_nodes", id: "memory.search_nodes", server: "memory", tool: "search_nodes", input_schema: { type: "object" } });
    expect(JSON.stringify(out.details.input_schema)).toContain("query");
    expect(out.found).toBe(language === "python" ? "dict" : "object");
    expect(out.missing).toBe("ToolNotFound");
  });

  it("lists the tools in Bash too: sandgate-tool --list-tools", async () => {
    const bash = await run("bash", "sandgate-tool --list-tools | jq -r '.[].name' | grep -c __");
    expect(Number(bash.stdout.trim())).toBeGreaterThan(10);
  });
});

describe("with no upstream servers configured", () => {
  let empty: CodeModeStack | undefined;
  let emptyDir: string;
  beforeAll(async () => {
    emptyDir = mkdtempSync(join(tmpdir(), "sandgate-discovery-empty-"));
    empty = await startCodeModeStack(emptyDir, { servers: {}, pool: { python: 0, javascript: 0, bash: 0 }, name: "discovery-empty-test" });
  }, 60_000);
  afterAll(async () => {
    await empty?.close();
    rmSync(emptyDir, { recursive: true, force: true });
  });

  it("searches and listings are empty in every language, not errors", async () => {
    const code = {
      python: 'import json\nprint(json.dumps([await search_tools("create issue"), await list_servers()]))',
      javascript: 'console.log(JSON.stringify([await searchTools("create issue"), await listServers()]))',
      typescript: 'const both: unknown[] = [await searchTools("create issue"), await listServers()];\nconsole.log(JSON.stringify(both))',
      bash: "echo \"[$(sandgate-tool --search 'create issue'),$(sandgate-tool --servers)]\"",
    };
    for (const [language, source] of Object.entries(code)) {
      const result = (await callTool(empty!.client, "execute_code", { language, code: source })).structuredContent as unknown as WireResult;
      expect(result.status, `${language}: ${JSON.stringify(result)}`).toBe("ok");
      expect(printed(result), language).toEqual([[], []]);
    }
  });
});

it("a hand-made call of an unknown or uncallable operation, or with bad options, gets an error reply, and the sandbox stays up", async () => {
  const result = await run(
    "python",
    [
      "import sandgate",
      "for op, args in ((\"nope\", {}), (\"codemode.nope\", {}), (\"sessions.list\", {}), (\"files.write\", {\"path\": \"x\", \"content\": \"y\"}), (\"codemode.search\", [1]), (\"codemode.search\", {\"query\": \"x\", \"evil\": 1}), (\"return\", {\"type\": 3})):",
      "    try:",
      "        await sandgate._channel.call(\"probe\", args, op)",
      "    except ToolError as e:",
      "        print(e.kind, e.message)",
      'print("alive")',
    ].join("\n"),
  );
  expect(result.stdout.split("\n")).toEqual([
    "InvalidArguments call refused: `nope` is not an operation id (feature.verb, e.g. codemode.search)",
    "InvalidArguments no operation codemode.nope can be called from code (operations: codemode.search, codemode.servers, codemode.tools, codemode.tool)",
    "InvalidArguments no operation sessions.list can be called from code (operations: codemode.search, codemode.servers, codemode.tools, codemode.tool)",
    "InvalidArguments no operation files.write can be called from code (operations: codemode.search, codemode.servers, codemode.tools, codemode.tool)",
    "InvalidArguments the options must be a JSON object",
    "InvalidArguments unknown option `evil` (options: query, detail, limit, server)",
    "InvalidArguments the content must be an MCP content block, an array of blocks or a tool result with content",
    "alive",
    "",
  ]);
});
