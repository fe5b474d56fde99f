// Lint rules for sandgate: type-aware typescript-eslint, no console in library code.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  // test/fixtures/**/*.mjs: upstream servers run by node as separate programs, outside the TS project.
  { ignores: ["dist/**", "node_modules/**", "runners/**", "bench/**", "scripts/**", "coverage/**", "test/fixtures/**/*.mjs", ".readme-blocks-*/**", ".public-api-*/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/switch-exhaustiveness-check": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", ignoreRestSiblings: true }],
      // Handlers in tables are async by contract even when one of them has nothing to await.
      "@typescript-eslint/require-await": "off",
      "no-console": "error",
    },
  },
  // Imports run one way: the core knows no feature and no surface; a feature knows no surface.
  {
    files: ["src/{errors,config,languages,sandbox,execution,operations,store,util}/**/*.ts"],
    rules: {
      // The old homes of moved features stay listed, so a stale path cannot creep back into the core.
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/features/**", "**/governance/**", "**/pii/**", "**/codemode/**", "**/catalog/**", "**/upstream/**", "**/server/**", "**/cli/**", "**/app/**"],
              message: "the core imports no feature (src/features; nor their former homes src/governance, src/pii, src/codemode, src/catalog, src/upstream), no surface (src/server, src/cli) and not the composition root (src/app): give it a hook or a port instead (src/execution/hooks.ts)",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["src/features/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ group: ["**/server/**", "**/cli/**"], message: "a feature imports no surface (src/server, src/cli): surfaces derive from its operations" }] }],
    },
  },
  {
    files: ["src/cli/**/*.ts", "test/**/*.ts"],
    rules: { "no-console": "off" },
  },
  {
    files: ["test/**/*.ts", "vitest.config.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  { files: ["eslint.config.js"], ...tseslint.configs.disableTypeChecked },
);
