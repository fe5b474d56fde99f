// Writes the runners' stubs of sandgate's operations (runners/sandgate_ops.py, node_ops.cjs,
// sandgate_ops.sh) from the operations registry: `npm run stubs` after an operation's sandbox
// surface changed. test/unit/sandbox-calls.test.ts fails while the committed files differ.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { OPERATIONS } from "../src/features/index.js";
import { sandboxOperations } from "../src/operations/sandbox-calls.js";
import { sandboxStubs } from "../src/operations/sandbox-stubs.js";

const runners = join(import.meta.dirname, "..", "runners");
for (const [file, text] of Object.entries(sandboxStubs(sandboxOperations(OPERATIONS)))) {
  writeFileSync(join(runners, file), text);
  console.log(`wrote runners/${file}`);
}
