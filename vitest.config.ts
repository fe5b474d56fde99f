import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    // The JSON summary lets .ci/run print one plain "N passed, N failed" line.
    reporters: ["default", ["json", { outputFile: "node_modules/.vitest/results.json" }]],
    hookTimeout: 60_000,
    // Sandbox tests spawn real bubblewrap; two workers keep a 2-core host responsive.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
