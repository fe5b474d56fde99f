// `sandgate packages sync` runs one at a time per SANDBOX_DIR: a lock another sync has only just
// made is never taken for a dead one's, while a lock whose process is gone is taken over.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig, type SandgateConfig } from "../../src/config/index.js";
import { syncPackages } from "../../src/cli/package-sync.js";
import { packagesRoot } from "../../src/sandbox/package-sets.js";

const quiet = { progress: () => {} };

describe("the packages sync lock", () => {
  let dir: string;
  let config: SandgateConfig;
  let root: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sandgate-sync-lock-"));
    config = loadConfig({ SANDBOX_DIR: dir });
    root = packagesRoot(dir);
    mkdirSync(root, { recursive: true });
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("a sync that finds a lock just made, its pid not written yet, says another sync is running instead of taking it", async () => {
    writeFileSync(join(root, ".sync.lock"), "");
    await expect(syncPackages(config, quiet)).rejects.toThrow(/another `sandgate packages sync` \(just started\) is running/);
    expect(existsSync(join(root, ".sync.lock"))).toBe(true);
  });

  it("a sync that finds the lock of a process that is gone takes it over, runs, and leaves no lock behind", async () => {
    writeFileSync(join(root, ".sync.lock"), "2147483646");
    await expect(syncPackages(config, quiet)).resolves.toBeDefined();
    expect(existsSync(join(root, ".sync.lock"))).toBe(false);
  });

  it("a sync while this process holds the lock is told which pid runs", async () => {
    writeFileSync(join(root, ".sync.lock"), String(process.pid));
    await expect(syncPackages(config, quiet)).rejects.toThrow(`another \`sandgate packages sync\` (pid ${process.pid}) is running`);
  });
});
