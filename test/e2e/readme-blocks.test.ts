// Every code block of README.md runs as pasted (shell against the built command and a real server,
// TypeScript type-checked and run against the "sandgate" package, JSON parsed and validated) or
// says why not in a `<!-- not run: reason -->` line right above it. Needs `npm run build`.

import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { startServe, type ServeProcess } from "../fixtures/cli.js";
import { built } from "../fixtures/build.js";

const ROOT = resolve(import.meta.dirname, "..", "..");
const CLI = built("cli/main.js");
const MEMORY_SERVER = join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js");
/** The address the README's examples use; the test's server listens on a free port instead. */
const README_ADDRESS = /\b(localhost|127\.0\.0\.1):7860\b/g;

interface Block {
  lang: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
  heading: string;
  notRun?: string;
}

const SHELL = ["sh", "bash", "shell"];
const TYPESCRIPT = ["ts", "typescript"];
const JAVASCRIPT = ["js", "javascript", "mjs"];
/** Fences without a language (or "text") show output or file trees, not something to run. */
const TEXT = ["", "text"];

function readmeBlocks(text: string): Block[] {
  const lines = text.split("\n");
  const blocks: Block[] = [];
  let heading = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, "");
    const open = /^```(\S*)\s*$/.exec(line);
    if (!open) continue;
    const start = i;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    const marker = /^<!--\s*not run:\s*(.*?)\s*-->\s*$/.exec(lines[start - 1] ?? "");
    blocks.push({ lang: open[1]!.toLowerCase(), code: `${lines.slice(start + 1, end).join("\n")}\n`, line: start + 1, heading, ...(marker ? { notRun: marker[1]! } : {}) });
    i = end;
  }
  return blocks;
}

const blocks = readmeBlocks(readFileSync(join(ROOT, "README.md"), "utf8"));
const runnable = (b: Block): boolean => b.notRun === undefined && [...SHELL, ...TYPESCRIPT, ...JAVASCRIPT, "json"].includes(b.lang);
const named = (b: Block): string => `${b.lang} at README.md:${b.line} (${b.heading})`;
const shellBlocks = blocks.filter((b) => runnable(b) && SHELL.includes(b.lang));
const scriptBlocks = blocks.filter((b) => runnable(b) && (TYPESCRIPT.includes(b.lang) || JAVASCRIPT.includes(b.lang)));
const jsonBlocks = blocks.filter((b) => runnable(b) && b.lang === "json");

let dir: string;
let server: ServeProcess | undefined;
let serverPort = 0;
/** Inside the package, so that `import ... from "sandgate"` in a block resolves to this checkout. */
let scriptDir: string | undefined;
let typeErrors = "";

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], cwd: string, env: Record<string, string>, timeoutMs = 50_000): Promise<Run> {
  return new Promise((done) => {
    execFile(file, args, { cwd, env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      done({ status: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

/** A working directory of its own and state of its own: two sandgate processes never share a SANDBOX_DIR. */
function freshPlace(name: string): { cwd: string; env: Record<string, string> } {
  const cwd = mkdtempSync(join(dir, `${name}-`));
  chmodSync(cwd, 0o755); // the sandbox user must reach the workspaces under SANDBOX_DIR
  const env = { PATH: process.env.PATH ?? "", HOME: cwd, SANDBOX_DIR: join(cwd, ".state"), SANDGATE_POOL: "python=0,javascript=0,bash=0" };
  return { cwd, env };
}

async function startServer(): Promise<void> {
  const { cwd, env } = freshPlace("server");
  server = await startServe(env, () => true, { cwd, timeoutMs: 30_000 });
  serverPort = Number(new URL(server.url).port);
}

/** Type-checks every TypeScript block at once, as a program using the installed package would be. */
async function compileScripts(): Promise<void> {
  scriptDir = mkdtempSync(join(ROOT, ".readme-blocks-"));
  const sources: string[] = [];
  for (const block of scriptBlocks) {
    const ts = TYPESCRIPT.includes(block.lang);
    const file = join(scriptDir, `block-${block.line}.${ts ? "ts" : "mjs"}`);
    writeFileSync(file, block.code);
    if (ts) sources.push(file);
  }
  if (sources.length === 0) return;
  const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
  const flags = ["--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "--strict", "--skipLibCheck", "--types", "node"];
  const result = await run(process.execPath, [tsc, ...flags, "--outDir", join(scriptDir, "out"), "--rootDir", scriptDir, ...sources], scriptDir, { PATH: process.env.PATH ?? "" }, 120_000);
  typeErrors = result.stdout + result.stderr;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-readme-"));
  chmodSync(dir, 0o755);
  const needsServer = shellBlocks.some((b) => b.code.match(README_ADDRESS));
  // Both finish before a failure is reported, so afterAll never deletes a directory tsc is still writing.
  const started = await Promise.allSettled([needsServer ? startServer() : undefined, scriptBlocks.length > 0 ? compileScripts() : undefined]);
  for (const outcome of started) if (outcome.status === "rejected") throw outcome.reason;
}, 150_000);

afterAll(async () => {
  if (server && server.child.exitCode === null) await server.stop();
  if (scriptDir) rmSync(scriptDir, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

describe("README.md code blocks", () => {
  it("each block runs here or says why not, and the reasons are few", () => {
    const unaccounted = blocks.filter((b) => !TEXT.includes(b.lang) && !runnable(b) && !b.notRun).map(named);
    expect(unaccounted, "add a `<!-- not run: reason -->` line right above these, or make them runnable").toEqual([]);
    expect(blocks.filter((b) => b.notRun !== undefined && b.notRun.length < 10).map(named), "give a reason").toEqual([]);
    expect(blocks.filter((b) => b.notRun !== undefined).length).toBeLessThanOrEqual(blocks.filter(runnable).length);
  });

  it("library examples import from the package, never from dist/", () => {
    const deep = blocks.filter((b) => [...TYPESCRIPT, ...JAVASCRIPT].includes(b.lang) && /from\s+["'][^"']*\bdist\//.test(b.code)).map(named);
    expect(deep).toEqual([]);
  });

  for (const block of shellBlocks) {
    it(`the ${named(block)} block runs as pasted`, async () => {
      const { cwd, env } = freshPlace(`sh-${block.line}`);
      symlinkSync(join(ROOT, "sandgate"), join(cwd, "sandgate"));
      // curl reads $HOME/.curlrc: an HTTP error status fails the command instead of passing silently.
      writeFileSync(join(cwd, ".curlrc"), "fail-with-body\n");
      const script = block.code.replace(README_ADDRESS, (_all, host: string) => `${host}:${serverPort}`);
      const result = await run("bash", ["-e", "-o", "pipefail", "-c", script], cwd, env);
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout, "a call in the block failed").not.toMatch(/"status":\s*"error"|"isError":\s*true/);
    }, 90_000);
  }

  for (const block of scriptBlocks) {
    it(`the ${named(block)} block type-checks and runs against the "sandgate" package`, async () => {
      const ts = TYPESCRIPT.includes(block.lang);
      const base = `block-${block.line}`;
      if (ts) expect(typeErrors.split("\n").filter((l) => l.includes(`${base}.ts`)).join("\n")).toBe("");
      // The examples read ./sandgate.json like the command does; this one names a real upstream server.
      const { cwd, env } = freshPlace(`script-${block.line}`);
      const memory = { command: process.execPath, args: [MEMORY_SERVER], env: { MEMORY_FILE_PATH: join(cwd, "memory.jsonl") } };
      writeFileSync(join(cwd, "sandgate.json"), JSON.stringify({ mcpServers: { memory } }));
      const file = ts ? join(scriptDir!, "out", `${base}.js`) : join(scriptDir!, `${base}.mjs`);
      const result = await run(process.execPath, [file], cwd, env);
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      // `console.log(x); // 12.5` promises what x prints.
      for (const promised of block.code.matchAll(/console\.log\(.*\);\s*\/\/\s*(-?\d[\d.e+-]*)\s*$/gm)) expect(result.stdout).toContain(promised[1]);
    }, 90_000);
  }

  for (const block of jsonBlocks) {
    it(`the ${named(block)} block is valid JSON that sandgate accepts for what it shows`, async () => {
      const value = JSON.parse(block.code) as Record<string, unknown>;
      const { cwd, env } = freshPlace(`json-${block.line}`);
      const configKeys = new Set(["$schema", ...Object.keys(loadConfig({ SANDBOX_DIR: cwd }, { cwd }))]);
      if (Object.keys(value).every((key) => configKeys.has(key))) {
        // A sandgate.json (client configs in the mcpServers format are ones too): the loader accepts it.
        const path = join(cwd, "sandgate.json");
        writeFileSync(path, block.code);
        expect(() => loadConfig({ SANDBOX_DIR: join(cwd, ".state") }, { configPath: path })).not.toThrow();
        return;
      }
      // The result object: every field shown is one a real result has.
      expect(Object.keys(value)).toContain("exit_code");
      mkdirSync(env.SANDBOX_DIR!, { recursive: true });
      const result = await run(process.execPath, [CLI, "exec", "-l", "python", "--json", "1 + 1"], cwd, env);
      expect(result.status, result.stderr).toBe(0);
      const real = Object.keys(JSON.parse(result.stdout) as object);
      expect(Object.keys(value).filter((key) => !real.includes(key))).toEqual([]);
    }, 60_000);
  }
});
