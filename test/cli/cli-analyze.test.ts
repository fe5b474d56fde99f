// `sandgate analyze` and the policy in `sandgate exec`, as a user runs them (dist/, `npm run build` first).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, type CliResult } from "../fixtures/cli.js";
import { REVERSE_SHELL, UNPICKLE } from "../fixtures/risky-code.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-cli-analyze-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sandgate(args: string[], input?: string, env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { input: input ?? "", env: { SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20", ...env } });
}

describe("sandgate analyze", () => {
  it("prints level, risk and action, then one line per finding, and exits 0 when the policy warns", async () => {
    const r = await sandgate(["analyze", "--language", "python", UNPICKLE]);
    expect(r.code).toBe(0);
    const [level, risk, action, first] = r.stdout.split("\n");
    expect(level).toBe("level: high");
    expect(risk).toMatch(/^risk: \d+$/);
    expect(action).toMatch(/^action: warn/);
    expect(first).toMatch(/^2:\d+ high py\.deserialization\.\S+ /);
  });

  it("exits 3 when the policy would block the code, and --json gives the REST answer", async () => {
    const file = join(dir, "shell.py");
    writeFileSync(file, REVERSE_SHELL);
    const r = await sandgate(["analyze", "-f", file, "--json"]);
    expect(r.code).toBe(3);
    const body = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(body).toMatchObject({ language: "python", level: "critical", action: "block", metrics: { lines: 5 } });
  });

  it("reads stdin and, with governance off, analyses without a policy and exits 0", async () => {
    const r = await sandgate(["analyze", "-l", "python"], REVERSE_SHELL, { SANDGATE_GOVERNANCE: "off" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^level: critical\nrisk: \d+\naction: none/);
  });

  it("names an unknown language", async () => {
    const r = await sandgate(["analyze", "-l", "cobol", "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cobol.*UNKNOWN_LANGUAGE/);
  });
});

describe("the policy in sandgate exec", () => {
  it("refuses blocked code with POLICY_BLOCKED and exit 2, naming the line", async () => {
    const r = await sandgate(["exec", "-l", "python", `print('ran')\n${REVERSE_SHELL}`]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/reverse-shell.*line \d.*\[POLICY_BLOCKED\]/);
  });

  it("runs code it warns about, says so on stderr, and --json carries security", async () => {
    const r = await sandgate(["exec", "-l", "python", UNPICKLE]);
    expect(r).toMatchObject({ code: 0, stdout: "[1, 2]\n" });
    expect(r.stderr).toMatch(/security: risk \d+ \(high\), warn: deserialization at line 2/);
    const j = await sandgate(["exec", "-l", "python", "--json", UNPICKLE]);
    expect(JSON.parse(j.stdout)).toMatchObject({ status: "ok", security: { action: "warn" } });
  });
});
