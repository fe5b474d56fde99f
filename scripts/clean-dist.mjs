// Removes dist/ before a build, so a module that moved or was deleted leaves no stale copy behind
// for the CLI, the tests or the package to pick up.
import { rmSync } from "node:fs";

rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
