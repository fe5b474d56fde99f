// The tool FIFOs a sandgate process makes ahead for sandboxes it might start are removed when it
// exits: a loop of short `sandgate exec` runs does not pile FIFOs up under SANDBOX_DIR.

import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "./fixtures/cli.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-fifo-cleanup-"));
  chmodSync(dir, 0o755);
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("sandgate exec", () => {
  it("leaves no tool FIFOs behind, run after run", async () => {
    const channels = join(dir, "runtime", "channels");
    for (let i = 0; i < 3; i++) {
      const r = await runCli(["exec", "--language", "bash", "test -p /sandgate/channel/tool-requests && echo has-fifos"], { env: { SANDBOX_DIR: dir } });
      expect(r.stdout, r.stderr).toBe("has-fifos\n");
      expect(existsSync(channels)).toBe(true);
      expect(readdirSync(channels)).toEqual([]);
    }
  });
});
