// Installs the peers on demand into bench/peers/node_modules from their own lockfile, so that the main
// install and CI stay lean; `--skip-install` uses what is there.

import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";

const DIR = import.meta.dirname;

/** What the peers' install did, for the report. Throws when it is needed and fails. */
export async function ensurePeersInstalled({ skipInstall }) {
  const installed = join(DIR, "node_modules/.package-lock.json");
  if (skipInstall) {
    if (!existsSync(installed)) throw new Error("--skip-install: bench/peers/node_modules is missing; run once without --skip-install");
    return "skipped (--skip-install)";
  }
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(join(DIR, "package-lock.json")).mtimeMs) return "already installed";
  process.stderr.write("bench: installing the peers into bench/peers/node_modules (npm ci; isolated-vm builds from source, a few minutes) ...\n");
  await new Promise((resolve, reject) => {
    // stdout to stderr: the bench's stdout is its Markdown report.
    const child = spawn("npm", ["ci", "--no-audit", "--no-fund"], { cwd: DIR, stdio: ["ignore", 2, 2] });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`npm ci in bench/peers failed with exit ${code}`))));
  });
  process.stderr.write("bench: peers installed\n");
  return "installed now (npm ci)";
}
