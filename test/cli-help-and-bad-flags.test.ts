// Every `sandgate` command answers --help with the usage (exit 0), and an unknown or malformed
// flag is bad input (exit 2, one line pointing at --help), never an "unexpected failure" (70).

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, type CliResult } from "./fixtures/cli.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-cli-help-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sandgate = (args: string[]): Promise<CliResult> => runCli(args, { env: { SANDBOX_DIR: dir } });

describe("sandgate <command> --help", () => {
  it.each(["exec --help", "packages --help", "packages sync --help", "packages list -h", "doctor --help", "serve --help", "tools -h", "pii --help"])(
    "sandgate %s prints the usage and exits 0",
    async (line) => {
      const r = await sandgate(line.split(" "));
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("sandgate packages sync");
      expect(r.stdout).toContain("--images DIR");
    },
  );

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
