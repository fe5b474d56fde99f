// Scaffolding: the bash rules are being written (issue 12); this placeholder finds nothing.

import type { LanguageRules } from "./rules.js";

export const bashRules: LanguageRules = {
  grammar: "bash",
  metricNodes: { function: [], call: [], import: [], branch: [] },
  findings: () => [],
};
