// The risk score: a pure function from findings to 0-100 and a level, documented in the README
// ("Risk score") and tested by table. Policy decides on findings; the score is for people and audits.

import { RISK_LEVELS, type Finding, type RiskLevel, type Severity } from "./types.js";

/**
 * How likely one finding of each severity alone makes the program harmful. The score combines
 * findings as independent chances, 100 x (1 - product of (1 - weight)), so one critical finding
 * scores 90, one high 60, two highs 84, and info findings add nothing.
 */
export const SEVERITY_WEIGHT: Record<Severity, number> = { info: 0, low: 0.1, medium: 0.3, high: 0.6, critical: 0.9 };

/** Further findings of the same rule count a quarter each: one pattern repeated is not ten risks. */
const REPEAT_FACTOR = 0.25;

/** Lowest score of each level; a level is never below that of the most severe finding. */
export const LEVEL_FLOOR: Record<RiskLevel, number> = { none: 0, low: 1, medium: 30, high: 60, critical: 90 };

export function riskScore(findings: readonly Finding[]): number {
  const seen = new Map<string, number>();
  let safe = 1;
  for (const finding of findings) {
    const count = seen.get(finding.ruleId) ?? 0;
    seen.set(finding.ruleId, count + 1);
    const weight = SEVERITY_WEIGHT[finding.severity] * (count === 0 ? 1 : REPEAT_FACTOR);
    safe *= 1 - weight;
  }
  return Math.round(100 * (1 - safe));
}

const SEVERITY_LEVEL: Record<Severity, RiskLevel> = { info: "none", low: "low", medium: "medium", high: "high", critical: "critical" };

/** The level of a score, raised to the level of the most severe finding. */
export function riskLevel(score: number, findings: readonly Finding[]): RiskLevel {
  let level: RiskLevel = "none";
  for (const candidate of RISK_LEVELS) if (score >= LEVEL_FLOOR[candidate]) level = candidate;
  for (const finding of findings) {
    const floor = SEVERITY_LEVEL[finding.severity];
    if (RISK_LEVELS.indexOf(floor) > RISK_LEVELS.indexOf(level)) level = floor;
  }
  return level;
}
