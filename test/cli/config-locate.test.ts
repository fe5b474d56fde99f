// Which config file applies, asked of the library's loadConfig and of the built `sandgate` command
// alike: --config / configPath, else SANDGATE_CONFIG, else ./sandgate.json (needs `npm run build`).

import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { built } from "../fixtures/build.js";

const CLI = built("cli/main.js");

let dir: string;
let work: string;
let fromEnv: string;
let named: string;

function writeConfig(path: string, maxExecutionTimeS: number): string {
  writeFileSync(path, JSON.stringify({ limits: { maxExecutionTimeS } }));
  return path;
}

/** maxExecutionTimeS as a process started in `cwd` sees it: `node -e` with the library, or the command. */
function timeLimitIn(cwd: string, argv: string[], env: Record<string, string> = {}): Promise<number> {
  return new Promise((done, fail) => {
    execFile(process.execPath, argv, { cwd, env: { PATH: process.env.PATH ?? "", SANDBOX_DIR: join(dir, "state"), ...env } }, (error, stdout, stderr) => {
      if (error) fail(new Error(`${argv.join(" ")} failed: ${stderr}`));
      else done((JSON.parse(stdout) as { limits: { maxExecutionTimeS: number } }).limits.maxExecutionTimeS);
    });
  });
}

const library = (cwd: string, env?: Record<string, string>): Promise<number> =>
  timeLimitIn(cwd, ["--input-type=module", "-e", `const { loadConfig } = await import(${JSON.stringify(built("index.js"))}); console.log(JSON.stringify(loadConfig()));`], env);
const command = (cwd: string, args: string[] = [], env?: Record<string, string>): Promise<number> =>
  timeLimitIn(cwd, [CLI, "config", "--print", ...args], env);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-locate-"));
  work = join(dir, "work");
  mkdirSync(work);
  writeConfig(join(work, "sandgate.json"), 17);
  fromEnv = writeConfig(join(dir, "from-env.json"), 18);
  named = writeConfig(join(dir, "named.json"), 19);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("finding the config file", () => {
  it("the library and the command both read ./sandgate.json from the working directory", async () => {
    expect(await library(work)).toBe(17);
    expect(await command(work)).toBe(17);
    expect(loadConfig({ SANDBOX_DIR: dir }, { cwd: work }).limits.maxExecutionTimeS).toBe(17);
  });

  it("SANDGATE_CONFIG wins over ./sandgate.json, for both", async () => {
    expect(await library(work, { SANDGATE_CONFIG: fromEnv })).toBe(18);
    expect(await command(work, [], { SANDGATE_CONFIG: fromEnv })).toBe(18);
  });

  it("a file named explicitly wins over SANDGATE_CONFIG", async () => {
    expect(await command(work, ["--config", named], { SANDGATE_CONFIG: fromEnv })).toBe(19);
    expect(loadConfig({ SANDBOX_DIR: dir, SANDGATE_CONFIG: fromEnv }, { configPath: named, cwd: work }).limits.maxExecutionTimeS).toBe(19);
  });

  it("without any config file both use the defaults", async () => {
    expect(await library(dir)).toBe(300);
    expect(await command(dir)).toBe(300);
  });
});
