// The code policy as a table: each level's action per severity, the most restrictive finding
// winning, overrides per category and per language, and the config section's strict validation.

import { describe, expect, it } from "vitest";
import { defaultConfig, loadConfig, validateConfig } from "../../src/config/index.js";
import { decide, LEVEL_TABLES, SEVERITIES, type Action, type Category, type CodePolicy, type Finding, type Severity } from "../../src/features/governance/index.js";

function finding(severity: Severity, category: Category = "process-exec", line = 1): Finding {
  return { ruleId: `py.${category}.rule-${severity}`, category, severity, line, endLine: line, column: 1, message: "m", recommendation: "r" };
}

const base: CodePolicy = { level: "standard", categories: {}, languages: {} };

describe("security levels", () => {
  const expected: Record<string, Record<Severity, Action>> = {
    permissive: { info: "allow", low: "allow", medium: "allow", high: "allow", critical: "warn" },
    standard: { info: "allow", low: "allow", medium: "warn", high: "warn", critical: "block" },
    strict: { info: "allow", low: "warn", medium: "approve", high: "block", critical: "block" },
  };
  for (const [level, table] of Object.entries(expected)) {
    for (const severity of SEVERITIES) {
      it(`${level} answers a lone ${severity} finding with ${table[severity]}`, () => {
        const decision = decide({ language: "python", findings: [finding(severity)] }, { ...base, level: level as CodePolicy["level"] });
        expect(decision.action).toBe(table[severity]);
        expect(decision.because).toHaveLength(table[severity] === "allow" ? 0 : 1);
      });
    }
  }

  it("the tables in the code are the documented ones", () => {
    expect(LEVEL_TABLES).toEqual(expected);
  });

  it("code without findings is allowed at every level", () => {
    for (const level of ["permissive", "standard", "strict"] as const) expect(decide({ language: "bash", findings: [] }, { ...base, level })).toEqual({ action: "allow", because: [] });
  });

  it("the most restrictive finding decides, and every finding calling for that action is named", () => {
    const findings = [finding("critical", "reverse-shell", 4), finding("medium", "network", 2), finding("critical", "code-exec", 9)];
    const decision = decide({ language: "python", findings }, base);
    expect(decision.action).toBe("block");
    expect(decision.because.map((f) => f.line)).toEqual([4, 9]);
  });
});

describe("overrides", () => {
  it("a category set to one action replaces the level's for every severity of it", () => {
    const policy: CodePolicy = { ...base, categories: { "reverse-shell": "approve", deserialization: "allow" } };
    expect(decide({ language: "python", findings: [finding("critical", "reverse-shell")] }, policy).action).toBe("approve");
    expect(decide({ language: "python", findings: [finding("high", "deserialization")] }, policy).action).toBe("allow");
    // Other categories keep the level's table.
    expect(decide({ language: "python", findings: [finding("critical", "code-exec")] }, policy).action).toBe("block");
  });

  it("a category table changes only the severities it names", () => {
    const policy: CodePolicy = { ...base, categories: { network: { medium: "block" } } };
    expect(decide({ language: "python", findings: [finding("medium", "network")] }, policy).action).toBe("block");
    expect(decide({ language: "python", findings: [finding("high", "network")] }, policy).action).toBe("warn");
  });

  it("a language's level and categories replace the server-wide ones for that language only", () => {
    const policy: CodePolicy = { ...base, categories: { filesystem: "block" }, languages: { bash: { level: "permissive", categories: { filesystem: "warn" } } } };
    expect(decide({ language: "bash", findings: [finding("high", "process-exec")] }, policy).action).toBe("allow");
    expect(decide({ language: "bash", findings: [finding("low", "filesystem")] }, policy).action).toBe("warn");
    expect(decide({ language: "python", findings: [finding("low", "filesystem")] }, policy).action).toBe("block");
    expect(decide({ language: "python", findings: [finding("high", "process-exec")] }, policy).action).toBe("warn");
  });
});

describe("the security config section", () => {
  const env = { SANDBOX_DIR: "/tmp/sandgate-policy-test" };

  it("defaults to the standard level with governance on, five findings shown and a 10 s analysis deadline", () => {
    const config = loadConfig(env);
    expect(config.security).toEqual({ enabled: true, level: "standard", categories: {}, languages: {}, findingsShown: 5, analysisTimeoutMs: 10_000 });
  });

  it("takes the level and the off switch from the environment", () => {
    const config = loadConfig({ ...env, SANDGATE_SECURITY_LEVEL: "strict", SANDGATE_GOVERNANCE: "off" });
    expect(config.security.level).toBe("strict");
    expect(config.security.enabled).toBe(false);
  });

  it("refuses an unknown level, category, language or action as CONFIG_INVALID naming it", () => {
    expect(() => loadConfig({ ...env, SANDGATE_SECURITY_LEVEL: "paranoid" })).toThrow(/paranoid/);
    const file = (security: Record<string, unknown>): unknown => {
      const defaults = defaultConfig();
      try {
        validateConfig({ ...defaults, security: { ...defaults.security, ...security } }, "test");
        return undefined;
      } catch (error) {
        return error;
      }
    };
    for (const [security, named] of [
      [{ categories: { "time-travel": "block" } }, /time-travel/],
      [{ categories: { network: "forbid" } }, /forbid|network/],
      [{ languages: { cobol: { level: "strict" } } }, /cobol/],
      [{ languages: { python: { categories: { network: { huge: "block" } } } } }, /huge/],
    ] as const) {
      const error = file(security) as { code?: string; message?: string } | undefined;
      expect(error?.code, JSON.stringify(security)).toBe("CONFIG_INVALID");
      expect(error?.message).toMatch(named);
    }
  });
});
