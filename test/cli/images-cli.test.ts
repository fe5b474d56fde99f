// `sandgate exec` with images: a note per image on stderr, and --images DIR saving them as files
// (runs the built CLI: `npm run build` first).

import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { runCli } from "../fixtures/cli.js";

const TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGP8zwAFTDAGAwATKQED8NgHhAAAAABJRU5ErkJggg==";
const CODE = `import base64, sandgate\nsandgate.show(base64.b64decode("${TINY_PNG}"))\nsandgate.show('<svg xmlns="http://www.w3.org/2000/svg"></svg>')\nprint("two images")`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-images-cli-"));
  chmodSync(dir, 0o755); // the sandbox user must reach SANDBOX_DIR inside it
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

it("sandgate exec names each image on stderr and says how to save it", async () => {
  const result = await runCli(["exec", "-l", "python", CODE], { env: { SANDBOX_DIR: join(dir, "sandbox") } });
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toBe("two images\n");
  expect(result.stderr).toContain("sandgate: image 1: image/png, 1 KiB (pass --images DIR to save it)");
  expect(result.stderr).toContain("sandgate: image 2: image/svg+xml, 1 KiB (pass --images DIR to save it)");
});

it("sandgate exec --images DIR saves the images as numbered files after those already there", async () => {
  const out = join(dir, "out");
  const env = { SANDBOX_DIR: join(dir, "sandbox") };
  const first = await runCli(["exec", "-l", "python", "--images", out, CODE], { env });
  expect(first.code, first.stderr).toBe(0);
  expect(first.stderr).toContain(`saved as ${join(out, "image-1.png")}`);
  expect(readFileSync(join(out, "image-1.png")).toString("base64")).toBe(TINY_PNG);
  expect(readFileSync(join(out, "image-2.svg"), "utf8")).toContain("<svg");
  writeFileSync(join(out, "image-3.png"), "mine");
  const second = await runCli(["exec", "-l", "python", "--images", out, CODE], { env });
  expect(second.code, second.stderr).toBe(0);
  expect(readdirSync(out).sort()).toEqual(["image-1.png", "image-2.svg", "image-3.png", "image-4.png", "image-5.svg"]);
  expect(readFileSync(join(out, "image-3.png"), "utf8")).toBe("mine");
});
