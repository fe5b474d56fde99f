import { defineConfig } from "vitest/config";

// Projects by what a test needs, so the inner loop runs only what starts nothing:
//   npx vitest --project unit     no process, no socket (enforced by test/unit/starts-nothing.ts)
//   sandbox                       real bubblewrap sandboxes and engines, no server
//   server                        a real server (HTTP on port 0, MCP) over a test engine
//   cli                           the built `sandgate` command (run `npm run build` first)
//   e2e                           the README as pasted, the public package, a new user's session
//   attacks                       hostile code, upstream servers and clients against a real sandbox
const TIERS = ["unit", "sandbox", "server", "cli", "e2e", "attacks"] as const;

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The JSON summary lets .ci/run print one plain "N passed, N failed" line.
    reporters: ["default", ["json", { outputFile: "node_modules/.vitest/results.json" }]],
    // Sandbox tests spawn real bubblewrap; two workers keep a 2-core host responsive.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // A worker runs file after file of one project and imports src, the tokenizer and the parsers
    // once, instead of a fresh process per file (a third of the unit project's CPU time).
    isolate: false,
    projects: TIERS.map((name) => ({
      extends: true,
      test: {
        name,
        include: [`test/${name}/**/*.test.ts`],
        ...(name === "unit" ? { setupFiles: ["test/unit/starts-nothing.ts"] } : {}),
      },
    })),
  },
});
