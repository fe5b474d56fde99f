// Code mode sits above the engine and the sandbox: they define what they need from it
// (UpstreamCallHandler, UpstreamCallScope) and never import it, so each runs without it.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "..", "src");

/** Every module specifier a folder's TypeScript files import, with the file that imports it. */
function importsOf(folder: string): Array<{ file: string; from: string }> {
  const found: Array<{ file: string; from: string }> = [];
  for (const entry of readdirSync(join(SRC, folder), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const path = join(entry.parentPath, entry.name);
    const text = readFileSync(path, "utf8");
    for (const match of text.matchAll(/\bfrom\s+"([^"]+)"|\bimport\s*\(\s*"([^"]+)"\s*\)/g)) {
      found.push({ file: path.slice(SRC.length + 1), from: match[1] ?? match[2] ?? "" });
    }
  }
  return found;
}

describe("code mode's place in the layers", () => {
  it.each(["sandbox", "execution", "upstream", "catalog", "languages"])("src/%s never imports code mode", (folder) => {
    const imports = importsOf(folder);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter(({ from }) => from.includes("codemode/"))).toEqual([]);
  });

  it("other folders reach code mode only through its index", () => {
    const outside = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && entry.name !== "codemode")
      .flatMap((entry) => importsOf(entry.name))
      .filter(({ from }) => from.includes("codemode/") && !from.endsWith("codemode/index.js"));
    expect(outside).toEqual([]);
  });
});
