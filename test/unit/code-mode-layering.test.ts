// Code mode sits above the engine and the sandbox: they define what they need from it
// (UpstreamCallHandler, UpstreamCallScope) and never import it, so each runs without it.

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "..", "src");
const CODE_MODE = "features/codemode";

/** Every relative module a folder's TypeScript files import, as a path under src, with the file that imports it. */
function importsOf(folder: string): Array<{ file: string; from: string }> {
  const found: Array<{ file: string; from: string }> = [];
  for (const entry of readdirSync(join(SRC, folder), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const path = join(entry.parentPath, entry.name);
    const text = readFileSync(path, "utf8");
    for (const match of text.matchAll(/\bfrom\s+"([^"]+)"|\bimport\s*\(\s*"([^"]+)"\s*\)/g)) {
      const specifier = match[1] ?? match[2] ?? "";
      if (!specifier.startsWith(".")) continue;
      found.push({ file: relative(SRC, path), from: relative(SRC, resolve(dirname(path), specifier)) });
    }
  }
  return found;
}

const inside = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`);

describe("code mode's place in the layers", () => {
  it.each(["sandbox", "execution", "languages", `${CODE_MODE}/upstream`, `${CODE_MODE}/catalog`])("src/%s never imports code mode", (folder) => {
    const imports = importsOf(folder);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter(({ from }) => inside(from, CODE_MODE) && !inside(from, folder))).toEqual([]);
  });

  it("other folders reach code mode only through its index", () => {
    const outside = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .flatMap((entry) => importsOf(entry.name))
      .filter(({ file, from }) => !inside(file, CODE_MODE) && inside(from, CODE_MODE) && from !== `${CODE_MODE}/index.js`);
    expect(outside).toEqual([]);
  });
});
