// Generated wrappers: TypeScript from JSON Schema (checked by the real tsc) and Python (imported by python3).
// Small hand-written schemas pin exact output; the reference servers' real tool lists prove it all compiles.

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalog } from "../../src/features/codemode/catalog/index.js";
import { oldPythonPrelude } from "../fixtures/upstream/old-python.js";

const ROOT = join(import.meta.dirname, "..", "..");
const FIXTURES = join(import.meta.dirname, "..", "fixtures", "catalog");
const SERVERS = ["everything", "filesystem", "memory", "github"] as const;

function fixture(server: string): Tool[] {
  return JSON.parse(readFileSync(join(FIXTURES, `${server}.tools.json`), "utf8")) as Tool[];
}

const HOSTILE = 'Ends a comment */ and a docstring """ here, \\N{oops} and a trailing quote"';

/** Hand-written schemas covering the JSON Schema features the generators handle. */
const SHAPES: Tool[] = [
  {
    name: "get_tree",
    description: "Returns a tree.",
    inputSchema: {
      type: "object",
      properties: {
        root: { $ref: "#/$defs/Node", description: "The root node" },
        legacy: { $ref: "#/definitions/Leaf" },
      },
      required: ["root"],
      $defs: {
        Node: {
          type: "object",
          description: "A node of the tree",
          properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/Node" } } },
          required: ["name"],
        },
      },
      definitions: { Leaf: { type: "string", enum: ["x", "y"] } },
    },
    outputSchema: { type: "object", properties: { count: { type: "integer" } }, required: ["count"] },
  },
  {
    name: "pick",
    inputSchema: {
      type: "object",
      properties: {
        color: { type: "string", enum: ["red", "green"], default: "red", description: "Which color" },
        level: { enum: [1, 2, null] },
        kind: { const: "fixed" },
        big: { type: "string", enum: Array.from({ length: 1000 }, (_, i) => `v${i}`) },
        maybe: { type: ["string", "null"] },
        either: { oneOf: [{ type: "string" }, { type: "number" }] },
        any: { anyOf: [{ type: "boolean" }, { type: "array", items: { type: "string" } }] },
        both: { allOf: [{ $ref: "#/$defs/A" }, { $ref: "#/$defs/B" }] },
        pair: { type: "array", items: [{ type: "string" }, { type: "integer" }] },
        tuple2020: { type: "array", prefixItems: [{ type: "boolean" }], items: { type: "number" } },
        labels: { type: "object", additionalProperties: { type: "string" } },
        open: { type: "object" },
        "x-api-key": { type: "string" },
        from: { type: "string" },
        documentId: { type: "string" },
      },
      required: ["kind"],
      $defs: {
        A: { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        B: { type: "object", properties: { b: { type: "number" } } },
      },
    },
  },
  {
    name: "hostile",
    description: HOSTILE,
    inputSchema: {
      type: "object",
      properties: {
        self: { $ref: "#/$defs/Loop" },
        deep: nest(60),
        "*/": { type: "string", description: HOSTILE },
        '"""': { type: "string" },
      },
      $defs: { Loop: { $ref: "#/$defs/Loop2" }, Loop2: { anyOf: [{ $ref: "#/$defs/Loop" }, { type: "null" }] } },
    },
  },
  { name: "class", description: "A reserved word.", inputSchema: { type: "object", properties: { def: { type: "integer" } } } },
  {
    name: "by_ref",
    inputSchema: { type: "object", $ref: "#/$defs/Args", $defs: { Args: { type: "object", properties: { pageSize: { type: "integer" } }, required: ["pageSize"] } } },
  },
  { name: "index", inputSchema: { type: "object" } },
];

function nest(depth: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < depth; i++) schema = { type: "object", properties: { inner: schema } };
  return schema;
}

let base: string;
let dir: string;
let catalog: Catalog;

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "sandgate-codegen-"));
  dir = join(base, "tree");
  catalog = new Catalog({ dir });
  for (const server of SERVERS) catalog.setServer(server, fixture(server));
  catalog.setServer("shapes", SHAPES, { description: "Hand-written schemas" });
  catalog.setServer("google-drive", [
    { name: "getDocument", inputSchema: { type: "object", properties: { documentId: { type: "string" } }, required: ["documentId"] } },
  ]);
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

const ts = (path: string): string => catalog.readTreeFile(`servers/${path}`) ?? "";
const py = (module: string): string => catalog.readTreeFile(`python/servers/${module}/__init__.py`) ?? "";

describe("TypeScript", () => {
  it("type-checks every generated file with tsc --strict", () => {
    writeFileSync(
      join(base, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, noUncheckedIndexedAccess: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", types: [] },
        include: ["tree/servers/**/*.ts"],
      }),
    );
    const result = spawnSync(join(ROOT, "node_modules/.bin/tsc"), ["-p", join(base, "tsconfig.json")], { encoding: "utf8", timeout: 120_000 });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it("writes one file per tool with interfaces, a doc comment and a function calling callMCPTool", () => {
    const file = ts("memory/createEntities.ts");
    expect(file).toContain("declare function callMCPTool(id: string, args: object): Promise<unknown>;");
    expect(file).toContain("export interface CreateEntitiesInput {\n  entities: {\n    /** The name of the entity */\n    name: string;");
    expect(file).toContain("export interface CreateEntitiesOutput {");
    expect(file).toContain(" * Create multiple new entities in the knowledge graph\n");
    expect(file).toContain(
      'export async function createEntities(input: CreateEntitiesInput): Promise<CreateEntitiesOutput> {\n  return (await callMCPTool("memory.create_entities", input)) as CreateEntitiesOutput;\n}',
    );
    expect(ts("github/searchIssues.ts")).toContain("/** The server declares no output schema: the result is whatever the tool returns. */\nexport type SearchIssuesOutput = unknown;");
  });

  it("re-exports every tool of a server from its index", () => {
    expect(ts("memory/index.ts")).toContain('export { createEntities, type CreateEntitiesInput, type CreateEntitiesOutput } from "./createEntities.js";');
    expect(ts("shapes/index.ts")).toContain(
      'export { getTree, type GetTreeInput, type GetTreeOutput, type GetTreeLeaf, type GetTreeNode } from "./getTree.js";',
    );
    expect(ts("index.ts")).toContain('export * as googleDrive from "./google-drive/index.js";');
  });

  it("follows a $ref at the root of the input and keeps index.ts for the server", () => {
    expect(ts("shapes/byRef.ts")).toContain("export type ByRefInput = ByRefArgs;");
    expect(ts("shapes/byRef.ts")).toContain("export interface ByRefArgs {\n  pageSize: number;\n}");
    expect(ts("shapes/index_.ts")).toContain("export async function index_(input?: IndexInput)");
    expect(ts("shapes/index.ts")).toContain('export { index_, type IndexInput, type IndexOutput } from "./index_.js";');
  });

  it("makes the input optional when nothing is required", () => {
    expect(ts("everything/getEnv.ts")).toContain("export async function getEnv(input?: GetEnvInput): Promise<GetEnvOutput> {");
    expect(ts("everything/getEnv.ts")).toContain('callMCPTool("everything.get-env", input ?? {})');
  });

  it("names $defs and definitions, with recursion through the name", () => {
    const file = ts("shapes/getTree.ts");
    expect(file).toContain("/** A node of the tree */\nexport interface GetTreeNode {\n  name: string;\n  children?: GetTreeNode[];\n}");
    expect(file).toContain('export type GetTreeLeaf = "x" | "y";');
    expect(file).toContain("  /** The root node */\n  root: GetTreeNode;\n  legacy?: GetTreeLeaf;\n");
    expect(file).toContain("export interface GetTreeOutput {\n  count: number;\n}");
  });

  it("renders enums, const, unions, nullable, allOf, tuples, records and quoted keys", () => {
    const file = ts("shapes/pick.ts");
    expect(file).toContain('  /**\n   * Which color\n   *\n   * @default "red"\n   */\n  color?: "red" | "green";\n');
    expect(file).toContain("  level?: 1 | 2 | null;\n");
    expect(file).toContain('  kind: "fixed";\n');
    expect(file).toContain("  big?: string;\n");
    expect(file).toContain("  maybe?: string | null;\n");
    expect(file).toContain("  either?: string | number;\n");
    expect(file).toContain("  any?: boolean | string[];\n");
    expect(file).toContain("  both?: PickA & PickB;\n");
    expect(file).toContain("  pair?: [string, number];\n");
    expect(file).toContain("  tuple2020?: [boolean, ...number[]];\n");
    expect(file).toContain("  labels?: {\n    [key: string]: string;\n  };\n");
    expect(file).toContain("  open?: {\n    [key: string]: unknown;\n  };\n");
    expect(file).toContain('  "x-api-key"?: string;\n');
    expect(file).toContain("  from?: string;\n");
  });

  it("keeps hostile descriptions inside comments and survives cycles and deep nesting", () => {
    const file = ts("shapes/hostile.ts");
    expect(file).toContain(" * Ends a comment *\\/ and a docstring");
    expect(file).not.toMatch(/\*\/ and a docstring/);
    expect(file).toContain("/** The schema defines this type only in terms of itself. */\nexport type HostileLoop = unknown;");
    expect(file).toContain('  "*/"?: string;');
    expect(file).toContain("unknown");
    expect(ts("shapes/class_.ts")).toContain("export async function class_(input?: ClassInput): Promise<ClassOutput> {");
  });
});

describe("Python", () => {
  let output: { calls: unknown[]; docs: Record<string, string>; hints: Record<string, string> };

  beforeAll(() => {
    const stub = join(base, "stub");
    mkdirSync(stub);
    // Stands in for the sandbox runner's `sandgate` module in this unit test only.
    writeFileSync(join(stub, "sandgate.py"), "async def call_mcp_tool(id, args):\n    return {\"id\": id, \"args\": args}\n");
    const script = `${oldPythonPrelude(join(dir, "python"))}
import asyncio, json, sys, typing
sys.path[:0] = [${JSON.stringify(join(dir, "python"))}, ${JSON.stringify(stub)}]
import servers
from servers import everything, filesystem, memory, github, shapes, google_drive
from servers.google_drive import get_document
async def main():
    return [
        await get_document(document_id="abc"),
        await github.list_issues(owner="o", repo="r", per_page=5),
        await github.list_issues({"owner": "o", "repo": "r"}, page=2),
        await shapes.pick(x_api_key="k", from_="a", kind="fixed", documentId="d"),
        await shapes.class_(def_=1),
        await shapes.by_ref(page_size=3),
        await everything.get_sum(a=1, b=2),
        await memory.read_graph(),
    ]
calls = asyncio.run(main())
docs = {"hostile": shapes.hostile.__doc__, "pick": shapes.pick.__doc__}
hints = {k: repr(v) for k, v in typing.get_type_hints(shapes.PickInput, include_extras=True).items()}
hints["required"] = repr(sorted(shapes.PickInput.__required_keys__))
hints["both"] = repr(sorted(shapes.PickInputBoth.__required_keys__))
print(json.dumps({"calls": calls, "docs": docs, "hints": hints}))
`;
    const result = spawnSync("python3", ["-c", script], { encoding: "utf8", timeout: 60_000 });
    if (result.status !== 0) throw new Error(`python3 failed:\n${result.stderr}`);
    output = JSON.parse(result.stdout) as typeof output;
  });

  it("runs on Python 3.9: every module imports and works with typing as 3.9 has it (the script above)", () => {
    expect(output.calls).toHaveLength(8);
    expect(Object.keys(output.hints).length).toBeGreaterThan(10);
  });

  it("imports every generated module and calls through call_mcp_tool with the real property names", () => {
    expect(output.calls).toEqual([
      { id: "google-drive.getDocument", args: { documentId: "abc" } },
      { id: "github.list_issues", args: { owner: "o", repo: "r", per_page: 5 } },
      { id: "github.list_issues", args: { owner: "o", repo: "r", page: 2 } },
      { id: "shapes.pick", args: { "x-api-key": "k", from: "a", kind: "fixed", documentId: "d" } },
      { id: "shapes.class", args: { def: 1 } },
      { id: "shapes.by_ref", args: { pageSize: 3 } },
      { id: "everything.get-sum", args: { a: 1, b: 2 } },
      { id: "memory.read_graph", args: {} },
    ]);
  });

  it("writes TypedDicts with Literal, optional keys in a total=False part, and merged allOf", () => {
    expect(output.hints.color).toBe("typing.Literal['red', 'green']");
    expect(output.hints.kind).toBe("typing.Literal['fixed']");
    expect(output.hints.maybe).toBe("typing.Optional[str]");
    expect(output.hints.big).toBe("<class 'str'>");
    expect(output.hints.required).toBe("['kind']");
    expect(output.hints.both).toBe("['a']");
    const source = py("shapes");
    expect(source).toContain("from typing import Any, Literal, Optional, TypedDict, Union\n");
    expect(source).not.toContain("NotRequired");
    expect(source).toContain(
      'class _GetTreeNodeRequired(TypedDict):\n    name: str\n\n\nclass GetTreeNode(_GetTreeNodeRequired, total=False):\n    """A node of the tree"""\n    children: list["GetTreeNode"]\n',
    );
    expect(source).toContain('_PickInputRequired = TypedDict("_PickInputRequired", {\n    "kind": Literal["fixed"],\n})\n');
    expect(source).toContain('_PickInputOptional = TypedDict("_PickInputOptional", {');
    expect(source).toContain('class PickInput(_PickInputRequired, _PickInputOptional):\n    """Input of shapes.pick."""\n');
    expect(source).toContain('    "level": Literal[1, 2, None],\n');
    expect(source).toContain('    "maybe": Optional[str],\n');
    expect(source).toContain('    "either": Union[str, float],\n');
    expect(source).toContain('    "pair": tuple[str, int],\n');
    expect(source).toContain('    "labels": dict[str, str],\n');
    expect(source).toContain("class PickB(TypedDict, total=False):\n    b: float\n");
    expect(source).toContain("from sandgate import call_mcp_tool\n");
  });

  it("writes async wrappers with a signature, a docstring listing parameters and a kwargs mapping", () => {
    const source = py("google_drive");
    expect(source).toContain("async def get_document(args: Optional[GetDocumentInput] = None, /, **kwargs: Any) -> GetDocumentOutput:\n");
    expect(source).toContain('        document_id (str, required) [sent as "documentId"]\n');
    expect(source).toContain('    return await call_mcp_tool("google-drive.getDocument", _merge(args, kwargs, {"document_id": "documentId"}))\n');
    expect(output.docs.pick).toContain('x_api_key (str) [sent as "x-api-key"]');
    expect(output.docs.pick).toContain("color (Literal[\"red\", \"green\"]): Which color");
  });

  it("keeps hostile descriptions inside the docstring", () => {
    expect(output.docs.hostile).toContain(HOSTILE);
  });

  it("lists the server modules in the package", () => {
    const pkg = catalog.readTreeFile("python/servers/__init__.py") ?? "";
    expect(pkg).toContain('__all__ = ["everything", "filesystem", "memory", "github", "shapes", "google_drive"]');
  });
});
