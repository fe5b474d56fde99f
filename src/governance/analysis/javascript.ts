// Scaffolding: the JavaScript and TypeScript rules are being written (issue 12); this placeholder finds nothing.

import type { LanguageRules } from "./rules.js";

export const javascriptRules: LanguageRules = {
  grammar: "javascript",
  metricNodes: { function: [], call: [], import: [], branch: [] },
  findings: () => [],
};

export const typescriptRules: LanguageRules = { ...javascriptRules, grammar: "typescript" };
