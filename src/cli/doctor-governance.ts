// Doctor checks for governance: the analyzer's grammars load and find what they should, and the
// audit log the server would write opens (verifying it is `sandgate audit verify`, a full read).

import { existsSync } from "node:fs";
import type { SandgateConfig } from "../config/index.js";
import { Analyzer } from "../features/governance/index.js";
import { auditPathOf, openAuditLog } from "../store/index.js";
import type { Check } from "./doctor.js";

/** A line every rule set must flag, whatever else changes in the rules. */
const PROBE = "import os\nos.system(input())";

export async function governanceChecks(config: SandgateConfig): Promise<Check[]> {
  if (!config.security.enabled) {
    return [{ name: "governance", ok: true, required: false, detail: "off (security.enabled is false): no analysis, policy or audit" }];
  }
  const checks: Check[] = [];
  try {
    const analysis = await new Analyzer().analyze("python", PROBE);
    const found = analysis.findings.some((f) => f.category === "process-exec");
    checks.push({
      name: "static analysis",
      ok: found,
      required: false,
      detail: found ? `grammars load; policy level ${config.security.level}` : "the grammars load but a probe's os.system was not found: the rules are broken",
    });
  } catch (error) {
    checks.push({ name: "static analysis", ok: false, required: false, detail: `the grammars did not load: ${error instanceof Error ? error.message : String(error)}` });
  }
  if (!config.audit.enabled) {
    checks.push({ name: "audit log", ok: true, required: false, detail: "off (audit.enabled is false): nothing is recorded" });
    return checks;
  }
  const path = auditPathOf(config);
  const existed = existsSync(path);
  try {
    await openAuditLog(config).close();
    checks.push({ name: "audit log", ok: true, required: false, detail: `${path}${existed ? "" : " (created)"} opens for writing; \`sandgate audit verify\` checks its hash chain` });
  } catch (error) {
    checks.push({ name: "audit log", ok: false, required: false, detail: `${path} cannot be opened: ${error instanceof Error ? error.message : String(error)}` });
  }
  return checks;
}
