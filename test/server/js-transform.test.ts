// Host-side code preparation for the Node runner: the top-level-await rewrite and TypeScript
// stripping, evaluated with node:vm the way the runner evaluates them (no sandbox needed).
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { prepareJavaScript } from "../../src/languages/js-transform.js";
import { transpileTypeScript, TypeScriptSyntaxError } from "../../src/languages/ts-transpile.js";

/** Modules the fake loader knows, as the runner's __sandgateImport would return them. */
const MODULES: Record<string, Record<string, unknown>> = {
  "node:path": { default: { sep: "/" }, join: (...parts: string[]) => parts.join("/") },
  "sandgate:servers/demo": { default: { kind: "server" }, echo: (args: unknown) => Promise.resolve({ echoed: args }) },
  side: { default: {} },
};

/** One persistent global scope, like the runner's; each call's completion value is awaited. */
function createSession(filename = "main.js", loaded: string[] = []): (source: string) => Promise<unknown> {
  const context = vm.createContext({
    __sandgateImport: (specifier: string) => {
      loaded.push(specifier);
      const module = MODULES[specifier];
      return module ? Promise.resolve(module) : Promise.reject(new Error(`Cannot find module '${specifier}'`));
    },
  });
  return async (source) => {
    const completion: unknown = vm.runInContext(prepareJavaScript(source).code, context, { filename });
    return await Promise.resolve(completion);
  };
}

describe("prepareJavaScript", () => {
  it("passes code without top-level await or declarations through unchanged in script mode", () => {
    for (const code of ["1 + 1", "async function load() {\n  return await fetch('x');\n}", "var v = 2; v"]) {
      expect(prepareJavaScript(code)).toEqual({ code, mode: "script" });
    }
  });

  it("runs code without top-level await in script mode, with declarations that can be run again", async () => {
    for (const code of ['const word = "await";\nword', "const run = async () => { await 1; };\nclass A { async m() { for await (const x of []) {} } }"]) {
      expect(prepareJavaScript(code).mode).toBe("script");
    }
    expect(prepareJavaScript("const x = 1;\nx").code).toBe("var   x = 1;\nx");
    const run = createSession();
    expect(await run("const n = 1; class C { v() { return n } }\nnew C().v()")).toBe(1);
    expect(await run("const n = 2; class C { v() { return n * 10 } }\nnew C().v()")).toBe(20);
    expect(await run("let n = 3; n")).toBe(3);
  });

  it("leaves unparsable code alone so the runner reports the SyntaxError itself", () => {
    const code = "await 1;\nlet = = 2;";
    expect(prepareJavaScript(code)).toEqual({ code, mode: "script" });
  });

  it("switches to async mode for top-level await and for-await", () => {
    expect(prepareJavaScript("const a = await 1;").mode).toBe("async");
    expect(prepareJavaScript("for await (const x of []) {}").mode).toBe("async");
    expect(prepareJavaScript("if (true) { console.log(await 1); }").mode).toBe("async");
  });

  it("keeps top-level declarations as globals for the next call", async () => {
    const run = createSession();
    await run(
      [
        "const a = await Promise.resolve(1);",
        "let { b, c: [d], ...rest } = { b: 2, c: [3], e: 4 };",
        "var e = rest.e, unset;",
        "function f() { return a + b + d + e; }",
        "class K { static g() { return f() * 10; } }",
      ].join("\n"),
    );
    expect(await run("[a, b, d, e, typeof unset, f(), K.g()]")).toEqual([1, 2, 3, 4, "undefined", 10, 100]);
    // Running the same cell again must not fail with "already declared".
    await run("const a = await Promise.resolve(5);");
    expect(await run("a")).toBe(5);
  });

  it("hoists function declarations and var like a script would", async () => {
    const run = createSession();
    expect(await run("const r = await main();\nasync function main() { return 7; }\nr")).toBe(7);
    expect(await run("const before = typeof later;\nawait 0;\nvar later = 1;\nbefore")).toBe("undefined");
    expect(await run("main")).toBeTypeOf("function");
  });

  it("returns the value of the final expression statement", async () => {
    const run = createSession();
    expect(await run("await null;\n6 * 7")).toBe(42);
    expect(await run("({ answer: await 42 });")).toEqual({ answer: 42 });
    expect(await run('"use strict";\nstrictGlobal = await 3;\nstrictGlobal')).toBe(3);
    expect(await run("const x = await 1;")).toBeUndefined();
  });

  it("preserves line numbers, so an error on line 3 reports line 3", async () => {
    const code = "const a = await 1;\nconst b = 2;\nthrow new Error('boom');\n";
    const prepared = prepareJavaScript(code);
    expect(prepared.mode).toBe("async");
    // Only the closing `})()` is added, after the user's last line.
    expect(prepared.code.split("\n")).toHaveLength(code.split("\n").length + 1);
    expect(prepared.code.split("\n")[2]).toBe("throw new Error('boom');");
    const error = await createSession()(code).catch((err: unknown) => err);
    expect((error as Error).stack).toMatch(/main\.js:3:\d+/);
  });
});

describe("static and dynamic imports", () => {
  it("turns import declarations of every shape into awaited loads on the same lines", async () => {
    const code = [
      'import { echo, default as server } from "sandgate:servers/demo";',
      'import path, { join as j } from "node:path";',
      'import * as ns from "node:path";',
      'import "side";',
      "import {",
      "  echo as again,",
      '} from "sandgate:servers/demo";',
      "throw new Error([path.sep, j('a', 'b'), ns.join('c'), server.kind, again === echo].join(' '));",
    ].join("\n");
    const prepared = prepareJavaScript(code);
    expect(prepared.mode).toBe("async");
    expect(prepared.code.split("\n")[7]).toBe(code.split("\n")[7]);
    const loaded: string[] = [];
    const error = await createSession("main.js", loaded)(code).catch((err: unknown) => err);
    expect((error as Error).message).toBe("/ a/b c server true");
    expect((error as Error).stack).toMatch(/main\.js:8:\d+/);
    expect(loaded).toEqual(["sandgate:servers/demo", "node:path", "node:path", "side", "sandgate:servers/demo"]);
  });

  it("keeps imported names for the next call", async () => {
    const run = createSession();
    await run('import { echo } from "sandgate:servers/demo";');
    expect(await run("await echo({ a: 1 })")).toEqual({ echoed: { a: 1 } });
  });

  it("sends import() through the runner's loader, inside functions too", async () => {
    const code = "const load = (name) => import(name);\nload('node:path').then((m) => m.join('x', 'y'))";
    expect(prepareJavaScript(code).code).toBe("var   load = (name) => __sandgateImport(name);\nload('node:path').then((m) => m.join('x', 'y'))");
    expect(await createSession()(code)).toBe("x/y");
    expect(await createSession()("(await import('sandgate:servers/demo')).default.kind")).toBe("server");
  });

  it("drops `export` before declarations and refuses other exports on their line", async () => {
    const run = createSession();
    expect(await run("export const a = 2;\nexport function twice(x) { return x * a; }\ntwice(21)")).toBe(42);
    const error = await run("const x = 1;\n\nexport default x;").catch((err: unknown) => err);
    expect((error as Error).name).toBe("SyntaxError");
    expect((error as Error).message).toMatch(/^`export` is not supported here \(line 3\)/);
    expect((error as Error).stack).toMatch(/main\.js:3:\d+/);
  });

  it("removes TypeScript's type-only imports and keeps value imports", async () => {
    const code = [
      'import type { Stats } from "node:fs";',
      'import { type Dirent, echo } from "sandgate:servers/demo";',
      "const s: Stats | Dirent | undefined = undefined;",
      "(await echo({ s })) as unknown",
    ].join("\n");
    const js = transpileTypeScript(code);
    expect(js).not.toMatch(/node:fs|Dirent/);
    const loaded: string[] = [];
    expect(await createSession("main.ts", loaded)(js)).toEqual({ echoed: { s: undefined } });
    expect(loaded).toEqual(["sandgate:servers/demo"]);
  });
});

describe("transpileTypeScript", () => {
  it("strips types and keeps every line in place", async () => {
    const code = [
      "interface Point { x: number }",
      "const p: Point = { x: await Promise.resolve(1) };",
      "function id<T>(value: T): T { return value; }",
      "throw new Error(`line 4: ${id(p.x) as number}`);",
    ].join("\n");
    const js = transpileTypeScript(code);
    expect(js.split("\n")).toHaveLength(4);
    expect(js).not.toMatch(/interface|: Point|<T>|as number/);
    const error = await createSession("main.ts")(js).catch((err: unknown) => err);
    expect((error as Error).message).toBe("line 4: 1");
    expect((error as Error).stack).toMatch(/main\.ts:4:\d+/);
  });

  it("reports a syntax error with its 1-based line and column", () => {
    let caught: unknown;
    try {
      transpileTypeScript("const a = 1;\nlet b: = 2;");
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(TypeScriptSyntaxError);
    expect(caught).toMatchObject({ line: 2, column: 8 });
  });
});
