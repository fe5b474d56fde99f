// `sandgate exec --images` naming something that cannot hold images (a file, an empty name) is
// refused as bad input before any code runs, with one line and exit 2, never an internal error
// after the run (runs the built CLI: `npm run build` first).

import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { runCli } from "../fixtures/cli.js";

const CODE = `import sandgate\nprint("ran")\nsandgate.show('<svg xmlns="http://www.w3.org/2000/svg"></svg>')`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-images-dir-"));
  chmodSync(dir, 0o755); // the sandbox user must reach SANDBOX_DIR inside it
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

it("--images naming a file is refused before the code runs, with one line and exit 2", async () => {
  const file = join(dir, "notes.txt");
  writeFileSync(file, "mine\n");
  const result = await runCli(["exec", "-l", "python", "--images", file, CODE], { env: { SANDBOX_DIR: join(dir, "sandbox") } });
  expect(result.code).toBe(2);
  expect(result.stdout).toBe("");
  expect(result.stderr.trim().split("\n")).toEqual([`sandgate: --images ${file}: it is a file, not a directory; name a directory to save the images in [INVALID_INPUT]`]);
});

it("--images with an empty name is refused before the code runs", async () => {
  const result = await runCli(["exec", "-l", "python", "--images", "", CODE], { env: { SANDBOX_DIR: join(dir, "sandbox") } });
  expect(result.code).toBe(2);
  expect(result.stdout).toBe("");
  expect(result.stderr).toContain("--images needs a directory name [INVALID_INPUT]");
});

it("--images creates missing parent directories and saves the image there", async () => {
  const out = join(dir, "a", "b");
  const result = await runCli(["exec", "-l", "python", "--images", out, CODE], { env: { SANDBOX_DIR: join(dir, "sandbox") } });
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toBe("ran\n");
  expect(readdirSync(out)).toEqual(["image-1.svg"]);
});
