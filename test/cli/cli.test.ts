// The `sandgate` command as a user runs it: exec from an argument, a file and stdin, exit
// codes that mirror the result, doctor's report, and one-line errors for bad input.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, type CliResult } from "../fixtures/cli.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sandgate(args: string[], input?: string, env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { input: input ?? "", env: { SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20", ...env } });
}

describe("sandgate exec", () => {
  it("runs code given as an argument and prints output then the value", async () => {
    const r = await sandgate(["exec", "--language", "python", "print('hello')\n6 * 7"]);
    expect(r).toMatchObject({ code: 0, stdout: "hello\n42\n" });
  });

  it("runs a file, taking the language from its extension", async () => {
    const file = join(dir, "prog.ts");
    writeFileSync(file, "const xs: number[] = [1, 2, 3];\nconsole.log(xs.reduce((a, b) => a + b));\n");
    expect(await sandgate(["exec", "-f", file])).toMatchObject({ code: 0, stdout: "6\n" });
  });

  it("reads code from stdin", async () => {
    expect(await sandgate(["exec", "-l", "bash"], "echo from stdin | tr a-z A-Z")).toMatchObject({ code: 0, stdout: "FROM STDIN\n" });
  });

  it("mirrors the program's exit code and prints the traceback on stderr", async () => {
    const r = await sandgate(["exec", "-l", "python", "import sys\nprint('x')\nsys.exit(7)"]);
    expect(r.code).toBe(7);
    const e = await sandgate(["exec", "-l", "python", "1/0"]);
    expect(e.code).toBe(1);
    expect(e.stderr).toContain("ZeroDivisionError");
  });

  it("exits 124 on timeout", async () => {
    const r = await sandgate(["exec", "-l", "python", "--timeout", "1", "while True: pass"]);
    expect(r.code).toBe(124);
    expect(r.stderr).toContain("timed out");
  });

  it("prints the whole result with --json", async () => {
    const r = await sandgate(["exec", "-l", "javascript", "--json", "[1, 2]"]);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: "ok", exit_code: 0, value: [1, 2], session_id: null });
  });

  it("rejects bad input with one clear line and exit code 2", async () => {
    const r = await sandgate(["exec", "-l", "cobol", "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("unknown language");
    const t = await sandgate(["exec", "-l", "python", "--timeout", "999", "1"]);
    expect(t.code).toBe(2);
    expect(t.stderr).toContain("above the admin maximum");
  });
});

describe("sandgate doctor", () => {
  it("reports every protection as active on this host and exits 0", async () => {
    const r = await sandgate(["doctor", "--json"]);
    const report = JSON.parse(r.stdout) as { isolated: boolean; checks: Array<{ name: string; ok: boolean }> };
    expect(r.code).toBe(0);
    expect(report.isolated).toBe(true);
    const names = report.checks.filter((c) => c.ok).map((c) => c.name);
    for (const name of ["bubblewrap", "user namespace", "pid namespace", "network namespace", "mount namespace", "seccomp", "python runner", "bash runner"]) {
      expect(names).toContain(name);
    }
  });
});

describe("without isolation", () => {
  it("doctor exits non-zero and exec refuses to run code, both saying how to fix it", async () => {
    const env = { SANDGATE_BWRAP: "/nonexistent/bwrap" };
    const doctor = await sandgate(["doctor"], undefined, env);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain("✗ bubblewrap");
    expect(doctor.stdout).toContain("CANNOT be isolated");
    const exec = await sandgate(["exec", "-l", "python", "print('should not run')"], undefined, env);
    expect(exec.code).toBe(2);
    expect(exec.stdout).not.toContain("should not run");
    expect(exec.stderr).toContain("cannot be isolated");
    expect(exec.stderr).toContain("SANDBOX_UNAVAILABLE");
  });
});
