// Scaffolding: the python rules are being written (issue 12); this placeholder finds nothing.

import type { LanguageRules } from "./rules.js";

export const pythonRules: LanguageRules = {
  grammar: "python",
  metricNodes: { function: [], call: [], import: [], branch: [] },
  findings: () => [],
};
