// Tracebacks show the user's code as written: TypeScript's and rewritten JavaScript's error
// headers show the original line, and neither Node's internals nor the generated tool wrappers
// (`from servers.x import y`) appear as frames.

import { mkdirSync, mkdtempSync, rmSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCodeModeStack, type CodeModeStack } from "../fixtures/code-mode-stack.js";

const PKG = join(process.cwd(), "node_modules/@modelcontextprotocol");
let dir: string;
let stack: CodeModeStack | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-tracebacks-"));
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, "files"));
  stack = await startCodeModeStack(dir, {
    servers: { filesystem: { command: process.execPath, args: [join(PKG, "server-filesystem/dist/index.js"), join(dir, "files")] } },
    pool: { python: 1, javascript: 1, bash: 0 },
    name: "traceback-test",
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

const run = (language: "python" | "javascript" | "typescript", code: string) => stack!.engine.execute({ language, code });

describe("a traceback", () => {
  it("of TypeScript shows the line as written, with its types, not the transpiled line", async () => {
    const r = await run("typescript", "interface Row { n: number }\nconst row: Row | null = null as Row | null;\nconst total: number = (row as Row).n * 2;");
    expect(r.error?.type).toBe("TypeError");
    expect(r.error?.traceback).toMatch(/^main\.ts:3\nconst total: number = \(row as Row\)\.n \* 2;\n\nTypeError: Cannot read properties of null/);
  });

  it("of a failed require shows no source line of Node's own loader", async () => {
    const r = await run("javascript", "const { x } = require('./nothing.js')");
    expect(r.error?.traceback).toMatch(/^Error: Cannot find module '\.\/nothing\.js'/);
    expect(r.error?.traceback).not.toContain("node:internal");
  });

  it("of a failed tool call from Python names the user's line and no generated wrapper frame", async () => {
    const r = await run("python", "from servers.filesystem import read_text_file\n\nawait read_text_file(path='/nope/none.txt')");
    expect(r.error?.type).toBe("ToolError");
    expect(r.error?.traceback).toContain('main.py", line 3');
    expect(r.error?.traceback).not.toContain("/sandgate/");
  });
});
