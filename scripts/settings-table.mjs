// Writes the README's settings table from the setting() declarations in src/config/schema.ts,
// between its marker comments; test/cli/settings-declared.test.ts fails when the two differ.
//
// Usage: node scripts/settings-table.mjs [--check]
//   --check  write nothing; exit 1 when README.md's table is not the generated one
// Needs `npm run build` first (it reads dist/). Exit code 2 on a missing build.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const built = `${root}dist/config/settings-table.js`;
if (!existsSync(built)) {
  process.stderr.write("settings-table: run `npm run build` first\n");
  process.exit(2);
}
const { withSettingsTable } = await import(built);
const readmePath = `${root}README.md`;
const readme = readFileSync(readmePath, "utf8");
const updated = withSettingsTable(readme);
if (process.argv.includes("--check")) {
  if (updated !== readme) {
    process.stderr.write("settings-table: README.md's settings table differs from the declarations; run node scripts/settings-table.mjs\n");
    process.exit(1);
  }
} else if (updated !== readme) {
  writeFileSync(readmePath, updated);
  process.stderr.write("settings-table: README.md updated\n");
}
