// `sandgate exec --env NAME=VALUE` as a user runs it (dist/): the code sees the variable, a
// secret-looking one is masked in what is printed, and the host's own variables never reach it.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../fixtures/cli.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-env-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = "cli-secret-value-93817";

describe("sandgate exec --env", () => {
  it("gives the code its variables, masks a secret one and passes none of the host's", async () => {
    const r = await runCli(["exec", "-l", "bash", "-e", "GREETING=hi there", "--env", `API_TOKEN=${SECRET}`, 'echo "$GREETING $API_TOKEN ${HOST_ONLY-unset}"'], {
      env: { SANDBOX_DIR: dir, HOST_ONLY: "from-the-host" },
    });
    expect(r).toMatchObject({ code: 0, stdout: "hi there [masked:API_TOKEN] unset\n" });
    expect(r.stderr).not.toContain(SECRET);
  });

  it("refuses a pair without a value and a reserved name with a one-line error", async () => {
    const noValue = await runCli(["exec", "-l", "bash", "-e", "HOST_ONLY", "true"], { env: { SANDBOX_DIR: dir, HOST_ONLY: "x" } });
    expect(noValue.code).not.toBe(0);
    expect(noValue.stderr).toContain("--env takes NAME=VALUE");
    const reserved = await runCli(["exec", "-l", "bash", "-e", "LD_PRELOAD=/x.so", "true"], { env: { SANDBOX_DIR: dir } });
    expect(reserved.code).not.toBe(0);
    expect(reserved.stderr).toContain("LD_PRELOAD");
  });
});
