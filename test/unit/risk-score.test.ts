import { describe, expect, it } from "vitest";
import { riskLevel, riskScore, type Finding, type Severity } from "../../src/features/governance/index.js";

function finding(severity: Severity, ruleId = `rule.${severity}`): Finding {
  return { ruleId, category: "process-exec", severity, line: 1, endLine: 1, column: 1, message: "m", recommendation: "r" };
}

describe("risk score", () => {
  const table: [string, Finding[], number, string][] = [
    ["no findings", [], 0, "none"],
    ["an info finding only", [finding("info")], 0, "none"],
    ["one low", [finding("low")], 10, "low"],
    ["one medium", [finding("medium")], 30, "medium"],
    ["one high", [finding("high")], 60, "high"],
    ["one critical", [finding("critical")], 90, "critical"],
    ["two different highs", [finding("high", "a"), finding("high", "b")], 84, "high"],
    ["the same high rule twice counts a quarter more", [finding("high", "a"), finding("high", "a")], 66, "high"],
    ["many mediums reach high by score", [finding("medium", "a"), finding("medium", "b"), finding("medium", "c")], 66, "high"],
    ["a critical among lows", [finding("low"), finding("critical")], 91, "critical"],
  ];
  for (const [name, findings, score, level] of table) {
    it(`${name}: ${score}, ${level}`, () => {
      const risk = riskScore(findings);
      expect(risk).toBe(score);
      expect(riskLevel(risk, findings)).toBe(level);
    });
  }

  it("a level is never below the most severe finding's, whatever the score", () => {
    expect(riskLevel(5, [finding("high")])).toBe("high");
  });
});
