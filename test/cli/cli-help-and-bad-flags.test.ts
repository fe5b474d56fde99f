// Every `sandgate` command answers --help with the usage (exit 0), and an unknown or malformed
// flag is bad input (exit 2, one line pointing at --help), never an "unexpected failure" (70).

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, type CliResult } from "../fixtures/cli.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-cli-help-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sandgate = (args: string[]): Promise<CliResult> => runCli(args, { env: { SANDBOX_DIR: dir } });

describe("sandgate <command> --help", () => {
  it.each([
    ["exec --help", "--images DIR"],
    ["packages --help", "sandgate packages sync [--apt]"],
    ["packages sync --help", "[--find-links DIR]"],
    ["packages list -h", "sandgate packages list [--json]"],
    ["doctor --help", "sandgate doctor [--json]"],
    ["serve --help", "sandgate serve [--host H]"],
    ["tools -h", "sandgate tools --search WORDS"],
    ["pii --help", "sandgate pii [--types K,K]"],
    ["analyze --help", "Exit status of analyze"],
  ])("sandgate %s prints that command's own usage and exits 0", async (line, own) => {
    const r = await sandgate(line.split(" "));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(own);
    expect(r.stdout).toContain("--config FILE");
    // Not the global help: no other command's lines.
    const others = ["sandgate serve", "sandgate exec", "sandgate packages", "sandgate doctor", "sandgate audit", "sandgate pii"].filter((usage) => !usage.endsWith(line.split(" ")[0] ?? ""));
    for (const other of others) expect(r.stdout, other).not.toContain(other);
  });

  it("sandgate --help still prints every command", async () => {
    const r = await sandgate(["--help"]);
    expect(r.code).toBe(0);
    for (const usage of ["sandgate serve", "sandgate exec", "sandgate packages sync", "sandgate audit verify", "--images DIR"]) expect(r.stdout).toContain(usage);
  });

  it("code after -- may say --help and runs as code", async () => {
    const r = await sandgate(["exec", "-l", "bash", "--", "echo --help"]);
    expect(r).toMatchObject({ code: 0, stdout: "--help\n" });
  });
});

describe("bad flags", () => {
  it.each(["packages sync --bogus", "exec -l python --image d 1", "exec -l python --json=yes 1", "doctor --verbose", "pii --json --bogus"])(
    "sandgate %s exits 2 with one line naming the flag",
    async (line) => {
      const r = await sandgate(line.split(" "));
      expect(r.code).toBe(2);
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^sandgate: .*(--bogus|--image|--json|--verbose).*see sandgate --help/);
      expect(r.stderr).not.toContain("unexpected failure");
    },
  );
});

describe("sandgate packages with bad input", () => {
  it.each([
    ["packages sync extra", 'takes no "extra"'],
    ["packages list --apt", "--apt is for `sandgate packages sync`, not list"],
    ["packages list --no-index", "--no-index is for `sandgate packages sync`, not list"],
    ["packages sync --find-links /nonexistent-wheels", "--find-links /nonexistent-wheels: no such directory"],
  ])("sandgate %s is refused with one line before anything is installed", async (line, message) => {
    const r = await runCli(line.split(" "), { env: { SANDBOX_DIR: dir, SANDGATE_PYTHON_PACKAGES: "numpy" } });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(message);
    expect(existsSync(join(dir, "packages", "python"))).toBe(false);
  });
});

describe("sandgate exec -f with a file it cannot read", () => {
  it.each([
    ["a missing file", join(tmpdir(), "sandgate-no-such-file.py"), "no such file"],
    ["a directory", tmpdir(), "it is a directory"],
  ])("%s is refused with one line and exit 2, no stack trace", async (_what, file, message) => {
    const r = await sandgate(["exec", "-l", "python", "-f", file]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual([`sandgate: -f ${file}: ${message} [INVALID_INPUT]`]);
  });
});
