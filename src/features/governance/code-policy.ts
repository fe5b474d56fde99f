// The code policy: security levels as tables from finding severities to actions, overrides per
// category and per language, and decide(), the pure step from an analysis to allow|warn|approve|block.

import type { SecurityConfig } from "../../config/index.js";
import type { Language } from "../../languages/index.js";
import { ACTIONS, SECURITY_LEVELS, type Action, type Analysis, type Category, type Finding, type SecurityLevel, type Severity } from "./types.js";

export { SECURITY_LEVELS, type SecurityLevel };

export type SeverityActions = Record<Severity, Action>;

/** A category's override: one action for every severity, or a table (severities left out keep the level's action). */
export type CategoryOverride = Action | Partial<SeverityActions>;
export type CategoryOverrides = Partial<Record<Category, CategoryOverride>>;

/** The code policy as the config's `security` section gives it. */
export type CodePolicy = Pick<SecurityConfig, "level" | "categories" | "languages">;

/** What each level does with a finding of each severity; the most restrictive action over all findings wins. */
export const LEVEL_TABLES: Record<SecurityLevel, SeverityActions> = {
  permissive: { info: "allow", low: "allow", medium: "allow", high: "allow", critical: "warn" },
  standard: { info: "allow", low: "allow", medium: "warn", high: "warn", critical: "block" },
  strict: { info: "allow", low: "warn", medium: "approve", high: "block", critical: "block" },
};

/** How restrictive an action is: block > approve > warn > allow. */
export function actionRank(action: Action): number {
  return ACTIONS.indexOf(action);
}

export interface Decision {
  action: Action;
  /** The findings that drove the action (those whose own action is it); empty when it is allow. */
  because: Finding[];
}

/** The level and overrides that apply to code in `language`. */
export function policyFor(policy: CodePolicy, language: Language): { level: SecurityLevel; categories: CategoryOverrides } {
  const own = policy.languages[language];
  return { level: own?.level ?? policy.level, categories: { ...policy.categories, ...own?.categories } };
}

/** The action one finding calls for under `language`'s level and overrides. */
export function findingAction(finding: Finding, policy: CodePolicy, language: Language): Action {
  const { level, categories } = policyFor(policy, language);
  const override = categories[finding.category];
  if (typeof override === "string") return override;
  return override?.[finding.severity] ?? LEVEL_TABLES[level][finding.severity];
}

/** The most restrictive action over every finding, and the findings that call for it. */
export function decide(analysis: Pick<Analysis, "language" | "findings">, policy: CodePolicy): Decision {
  let action: Action = "allow";
  let because: Finding[] = [];
  for (const finding of analysis.findings) {
    const own = findingAction(finding, policy, analysis.language);
    if (actionRank(own) > actionRank(action)) {
      action = own;
      because = [finding];
    } else if (own === action && own !== "allow") {
      because.push(finding);
    }
  }
  return { action, because };
}

/** The code policy as /security/policy and sandgate://security-policy show it: the level, its table and the overrides. */
export function describeCodePolicy(policy: CodePolicy): {
  level: SecurityLevel;
  table: SeverityActions;
  levels: Record<SecurityLevel, SeverityActions>;
  categories: CategoryOverrides;
  languages: CodePolicy["languages"];
} {
  return { level: policy.level, table: LEVEL_TABLES[policy.level], levels: LEVEL_TABLES, categories: policy.categories, languages: policy.languages };
}
