// The built binary (dist/cli/main.js) as a process: what only a process shows. Every other CLI test
// runs `main` in process (test/fixtures/cli.ts runCli); these check the binary sets the same exit status and lines.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runBinary, runCli } from "../fixtures/cli.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-binary-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { SANDBOX_DIR: dir };

describe("the sandgate binary", () => {
  it("prints the usage on stdout: exit 0 for --help, 2 without a command", async () => {
    const help = await runBinary(["--help"], { env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("sandgate exec --language LANG");
    expect(help.stderr).toBe("");
    const bare = await runBinary([], { env });
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe(help.stdout);
  });

  it("says a bad flag or a bad config file in one line on stderr and exits 2", async () => {
    const flag = await runBinary(["doctor", "--verbose"], { env });
    expect(flag.code).toBe(2);
    expect(flag.stdout).toBe("");
    expect(flag.stderr).toMatch(/^sandgate: Unknown option '--verbose'.*\(see sandgate --help\)\n$/);
    const config = await runBinary(["config", "--print", "--config", join(dir, "missing.json")], { env });
    expect(config.code).toBe(2);
    expect(config.stderr).toBe(`sandgate: cannot read config file ${join(dir, "missing.json")}: no such file [CONFIG_INVALID]\n`);
  });

  it("names ./sandgate.json of its working directory as a user types it, as main does in process", async () => {
    const cwd = mkdtempSync(join(dir, "cwd-"));
    writeFileSync(join(cwd, "sandgate.json"), JSON.stringify({ limits: { maxExecutionTimeS: 11 } }));
    const binary = await runBinary(["config", "--print"], { env, cwd });
    expect(binary.code).toBe(0);
    expect(binary.stderr).toBe("# effective configuration: defaults, then sandgate.json, then the environment\n");
    expect((JSON.parse(binary.stdout) as { limits: { maxExecutionTimeS: number } }).limits.maxExecutionTimeS).toBe(11);
    expect(await runCli(["config", "--print"], { env, cwd })).toEqual(binary);
  });
});
