// Sandgate's operations as sandboxed code calls them: which operations code may call, how a call's
// arguments are refused (in words derived from the operation's schema), the per-execution count,
// the kinds errors reach code as, and the stubs generated for the runners, which must match the
// committed files under runners/.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SandgateError } from "../../src/errors/index.js";
import { OPERATIONS } from "../../src/features/index.js";
import { defineOperation, type AnyOperation, type OperationCall } from "../../src/operations/index.js";
import { sandboxCallHandler, sandboxOperations, type SandboxOperation } from "../../src/operations/sandbox-calls.js";
import { sandboxStubs } from "../../src/operations/sandbox-stubs.js";

const seen: Array<{ input: unknown; call: OperationCall }> = [];

const things = defineOperation({
  id: "things.find",
  summary: "Find things",
  scope: "execute",
  effects: ["read"],
  input: z
    .object({
      words: z.string().min(1, "the words are empty: give one or two"),
      limit: z.number().int().min(1).max(20).optional(),
      order: z.enum(["new", "old"]).optional(),
      exact: z.boolean().optional(),
      tags: z.array(z.string()).max(3).optional(),
      near: z.string().min(2).max(8).optional(),
    })
    .strict(),
  output: z.object({ found: z.array(z.string()), total: z.number() }),
  async run(_host: { fail?: SandgateError }, input, call) {
    seen.push({ input, call });
    if (input.words === "boom") throw new SandgateError("FORBIDDEN", "not yours");
    if (input.words === "crash") throw new Error("a bug at /srv/secret/path");
    return { found: [`${input.words}:${input.limit ?? 0}`], total: 1 };
  },
  surfaces: {
    mcp: null,
    rest: null,
    sandbox: { names: { python: "find_things", javascript: "findThings", bash: "find" }, positional: ["words"], returns: "found", doc: "Things that match." },
  },
});

const hidden = { ...things, id: "things.hidden", surfaces: { mcp: null, rest: null, sandbox: null } } as const;

function handler(maxCalls = 5) {
  const callable = sandboxOperations([things, hidden] as AnyOperation<object>[]);
  return sandboxCallHandler(callable, () => ({}), { owner: "key:alice", maxCalls });
}

const signal = new AbortController().signal;

describe("a call from code", () => {
  it("runs the operation for the code's caller and answers with the field its surface returns", async () => {
    seen.length = 0;
    expect(await handler()({ op: "things.find", args: { words: "cats", limit: 3 } }, signal)).toEqual({ ok: true, value: ["cats:3"] });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.call.owner).toBe("key:alice");
    expect(seen[0]!.call.signal).toBe(signal);
  });

  it("refuses an operation without a sandbox surface as it refuses an unknown one, naming those code may call", async () => {
    const answer = { ok: false, error: { type: "InvalidArguments", message: expect.stringContaining("(operations: things.find)") } };
    expect(await handler()({ op: "things.hidden", args: { words: "x" } }, signal)).toEqual(answer);
    expect(await handler()({ op: "things.nope", args: {} }, signal)).toEqual(answer);
  });

  it.each([
    [{ words: "x", limit: 500 }, "limit must be a whole number from 1 to 20"],
    [{ words: "x", limit: "3" }, "limit must be a whole number from 1 to 20"],
    [{ words: "x", order: "sideways" }, 'order must be "new" or "old"'],
    [{ words: "x", exact: "yes" }, "exact must be true or false"],
    [{ words: 7 }, "words must be a string"],
    [{}, "words must be a string"],
    [{ words: "" }, "the words are empty: give one or two"],
    [{ words: "x", evil: 1 }, "unknown option `evil` (options: words, limit, order, exact, tags, near)"],
    [{ words: "x", tags: ["a", "b", "c", "d"] }, "tags must be a list of at most 3 items"],
    [{ words: "x", near: "x" }, "near must be a string of 2 to 8 characters"],
    [{ words: "x", near: "far too long" }, "near must be a string of 2 to 8 characters"],
    [Object.fromEntries([..."abcdefg"].map((k) => [k.repeat(100), 1]).concat([["words", "x"]])), `unknown option \`${"a".repeat(64)}\`, \`${"b".repeat(64)}\`, \`${"c".repeat(64)}\`, \`${"d".repeat(64)}\`, \`${"e".repeat(64)}\` and 2 more (options: words, limit, order, exact, tags, near)`],
    [[1], "the options must be a JSON object"],
    ["text", "the options must be a JSON object"],
  ])("refuses %j with words derived from the schema", async (args, message) => {
    expect(await handler()({ op: "things.find", args }, signal)).toEqual({ ok: false, error: { type: "InvalidArguments", message } });
  });

  it("says an operation without input fields takes no options", async () => {
    const bare = { ...things, id: "things.all", input: z.object({}).strict(), surfaces: { ...things.surfaces, sandbox: { ...things.surfaces.sandbox, positional: [], names: { python: "all_things", javascript: "allThings", bash: "all" } } } };
    const calls = sandboxCallHandler(sandboxOperations([bare] as AnyOperation<object>[]), () => ({}), { owner: "o", maxCalls: 1 });
    expect(await calls({ op: "things.all", args: { x: 1 } }, signal)).toEqual({ ok: false, error: { type: "InvalidArguments", message: "it takes no options (got `x`)" } });
  });

  it("answers a SandgateError with the kind its HTTP status maps to, and a bug with its public form, its text logged and never sent", async () => {
    expect(await handler()({ op: "things.find", args: { words: "boom" } }, signal)).toEqual({ ok: false, error: { type: "ToolDenied", message: "not yours" } });
    const logged: string[] = [];
    const calls = sandboxCallHandler(sandboxOperations([things] as AnyOperation<object>[]), () => ({}), { owner: "o", maxCalls: 5, log: { error: (detail) => void logged.push((detail.err as Error).message) } });
    const answer = await calls({ op: "things.find", args: { words: "crash" } }, signal);
    expect(answer).toMatchObject({ ok: false, error: { type: "ToolError" } });
    expect(JSON.stringify(answer)).not.toContain("/srv/secret");
    expect(logged.join("\n")).toContain("/srv/secret/path");
  });

  it("stops at the execution's count, refused and unknown calls included, with a ToolLimit naming the functions", async () => {
    const calls = handler(3);
    expect((await calls({ op: "things.find", args: { words: "a" } }, signal)).ok).toBe(true);
    expect((await calls({ op: "things.find", args: { words: "" } }, signal)).ok).toBe(false);
    expect((await calls({ op: "things.nope", args: {} }, signal)).ok).toBe(false);
    expect(await calls({ op: "things.find", args: { words: "b" } }, signal)).toEqual({
      ok: false,
      error: { type: "ToolLimit", message: "this execution reached its limit of 3 calls of sandgate's own functions (find_things)" },
    });
    // Each execution has a handler, and a count, of its own.
    expect((await handler(2)({ op: "things.find", args: { words: "c" } }, signal)).ok).toBe(true);
  });
});

describe("which operations code may call", () => {
  const redeclare = (sandbox: Record<string, unknown>, scope = "execute"): AnyOperation<object>[] => [
    { ...things, scope, surfaces: { ...things.surfaces, sandbox: { ...things.surfaces.sandbox, ...sandbox } } } as AnyOperation<object>,
  ];

  it("refuses a declaration that would give code more than its caller's execute scope, or let it start runs", () => {
    expect(() => sandboxOperations(redeclare({}, "admin"))).toThrow("needs the execute scope");
    expect(() => sandboxOperations([{ ...things, effects: ["runs-code"] }])).toThrow("cannot be on an operation that runs code");
  });

  it("refuses names and fields a runner could not carry: keywords, the runners' own names, dashes, optional positional fields, bad ids", () => {
    const names = (python: string, javascript = "ok", bash = "ok") => redeclare({ names: { python, javascript, bash } });
    expect(() => sandboxOperations(names("from"))).toThrow('names it "from" in python');
    expect(() => sandboxOperations(names("ok", "default"))).toThrow('names it "default" in javascript');
    expect(() => sandboxOperations(names("show"))).toThrow('names it "show" in python');
    expect(() => sandboxOperations(names("ok", "callMCPTool"))).toThrow("callMCPTool");
    expect(() => sandboxOperations(names("find-things"))).toThrow('names it "find-things" in python');
    expect(() => sandboxOperations(names("ok", "ok", "return"))).toThrow('names it "return" in bash');
    expect(() => sandboxOperations(redeclare({ positional: ["limit"] }))).toThrow("takes limit by position, which is optional");
    expect(() => sandboxOperations([{ ...things, id: "Things.Find" }])).toThrow("needs an id of the form feature.verb");
    const badField = { ...things, input: z.object({ words: z.string(), class: z.string().optional() }) };
    expect(() => sandboxOperations([badField] as AnyOperation<object>[])).toThrow("cannot carry input field class");
  });

  it("refuses positional and returned fields the schemas do not have, and names that are not identifiers", () => {
    expect(() => sandboxOperations(redeclare({ positional: ["nope"] }))).toThrow("takes nope by position");
    expect(() => sandboxOperations(redeclare({ returns: "nope" }))).toThrow("returns nope");
    expect(() => sandboxOperations(redeclare({ names: { python: "find things", javascript: "x", bash: "y" } }))).toThrow('names it "find things" in python');
  });

  it("refuses two operations with one name in a language", () => {
    const twin = { ...things, id: "things.twin", surfaces: { ...things.surfaces, sandbox: { ...things.surfaces.sandbox, names: { python: "other", javascript: "other", bash: "find" } } } };
    expect(() => sandboxOperations([things, twin] as AnyOperation<object>[])).toThrow("names it find in bash, as operation things.find is named");
  });

  it("is, in sandgate, the code mode's search, server list, tool list and one tool's details, in that order", () => {
    expect(sandboxOperations(OPERATIONS as readonly AnyOperation<never>[]).map((o) => o.id)).toEqual(["codemode.search", "codemode.servers", "codemode.tools", "codemode.tool"]);
  });
});

describe("the runners' stubs", () => {
  it("are the committed files under runners/ (run `npm run stubs` after changing a sandbox surface)", () => {
    const stubs = sandboxStubs(sandboxOperations(OPERATIONS as readonly AnyOperation<never>[]));
    for (const [file, text] of Object.entries(stubs)) {
      expect(readFileSync(join(process.cwd(), "runners", file), "utf8"), `runners/${file} is stale: run npm run stubs`).toBe(text);
    }
  });

  it("give each language the operation's name, positional fields and options", () => {
    const stubs = sandboxStubs([things] as SandboxOperation<object>[]);
    expect(stubs["sandgate_ops.py"]).toContain("async def find_things(words, limit=None, order=None, exact=None, tags=None, near=None):");
    expect(stubs["sandgate_ops.py"]).toContain('_call_operation("things.find", "find_things", {"words": words, "limit": limit, "order": order, "exact": exact, "tags": tags, "near": near})');
    expect(stubs["node_ops.cjs"]).toContain("function findThings(words, options) {");
    expect(stubs["node_ops.cjs"]).toContain("return call('things.find', 'find_things', findThings, 'findThings(words, options)', options, { words });");
    expect(stubs["sandgate_ops.sh"]).toContain("declare -A sandgate_op_options=([find]='limit:number order:string exact:boolean tags:json near:string')");
  });

  it("keep a doc line that would close its quotes or comment inside the text", () => {
    const hostile = { ...things, surfaces: { ...things.surfaces, sandbox: { ...things.surfaces.sandbox, doc: `a """ b */ c ' d \\ e` } } };
    const stubs = sandboxStubs([hostile] as SandboxOperation<object>[]);
    expect(stubs["sandgate_ops.py"]).toContain(`"""a ''' b */ c ' d / e Options:`);
    expect(stubs["node_ops.cjs"]).toContain("/** a \"\"\" b * / c ' d \\ e Options:");
    expect(stubs["sandgate_ops.sh"]).toContain(`[find]='a """ b */ c '\\'' d \\ e'`);
  });
});

describe("a declaration without a sandbox surface", () => {
  it("does not compile: every surface is decided, null where the operation does not appear", () => {
    const declare = () =>
      defineOperation({
        id: "things.missing",
        summary: "Missing",
        scope: "execute",
        effects: ["read"],
        input: z.object({}),
        output: z.object({}),
        run: async () => ({}),
        // @ts-expect-error -- `sandbox` is missing: a surface left undecided is a type error (npm run typecheck fails without it)
        surfaces: { mcp: null, rest: null },
      });
    expect(declare().surfaces).toEqual({ mcp: null, rest: null });
  });
});
