// The tool FIFOs a sandgate process makes ahead for sandboxes it might start are removed when it
// exits: a loop of short `sandgate exec` runs does not pile FIFOs up under SANDBOX_DIR.

import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runBinary, runCli } from "../fixtures/cli.js";

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
    // As root they are made in the process's own tmpfs (runtime-view.ts), unmounted at exit.
    const channels = process.getuid?.() === 0 ? undefined : join(dir, "runtime", "channels");
    // The views the CLI's process made, once it exited (other test files' processes come and go meanwhile, some killed).
    const viewsOf = (pid: number | undefined): string[] =>
      readFileSync("/proc/self/mountinfo", "utf8")
        .split("\n")
        .map((line) => line.split(" ")[4] ?? "")
        .filter((path) => path.startsWith("/run/sandgate/views/") && Number(/(\d+)-\d+$/.exec(path)?.[1]) === pid);
    for (let i = 0; i < 3; i++) {
      // The binary: the FIFOs made ahead are removed when the process exits.
      let pid: number | undefined;
      const r = await runBinary(["exec", "--language", "bash", "test -p /sandgate/channel/tool-requests && echo has-fifos"], { env: { SANDBOX_DIR: dir }, onStarted: (started) => (pid = started) });
      expect(r.stdout, r.stderr).toBe("has-fifos\n");
      if (channels) expect(readdirSync(channels)).toEqual([]);
      else {
        expect(pid).toBeGreaterThan(0);
        expect(viewsOf(pid)).toEqual([]);
      }
    }
  });
});

describe("a sandgate process starting while another removes its FIFOs", () => {
  it("starts its sandbox: an entry gone between listing and checking it is skipped", async () => {
    const channels = join(dir, "runtime", "channels");
    mkdirSync(channels, { recursive: true, mode: 0o711 });
    // Many entries another process is removing (as each of its sandboxes closes, or as it exits).
    const names = Array.from({ length: 20_000 }, (_, i) => `tool-other${i}`);
    for (const name of names) mkdirSync(join(channels, name));
    const started = runCli(["exec", "--language", "bash", "echo started"], { env: { SANDBOX_DIR: dir } });
    let removed = 0;
    for (const name of names) {
      await rm(join(channels, name), { recursive: true, force: true });
      removed++;
    }
    const r = await started;
    expect(removed).toBe(names.length);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("started\n");
  });
});
