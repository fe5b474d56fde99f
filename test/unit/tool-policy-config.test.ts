// The toolPolicy and approvals settings: read from the environment and the config file, refused
// with a message naming the variable or field when malformed, and decided most-specific-first.

import { describe, expect, it } from "vitest";
import { configSchema, loadConfig } from "../../src/config/index.js";
import { toolPolicyFor } from "../../src/features/governance/index.js";

describe("tool policy settings", () => {
  it("reads rules and the default from the environment", () => {
    const config = loadConfig({ SANDBOX_DIR: "/tmp/sg-tp", SANDGATE_TOOL_POLICY: "github=deny, github.create_issue=approve", SANDGATE_TOOL_POLICY_DEFAULT: "approve", SANDGATE_APPROVAL_TIMEOUT: "45" });
    expect(config.toolPolicy).toEqual({ default: "approve", rules: { github: "deny", "github.create_issue": "approve" } });
    expect(config.approvals.timeoutS).toBe(45);
  });

  it("refuses an unknown action or a malformed key, naming the variable", () => {
    expect(() => loadConfig({ SANDBOX_DIR: "/tmp/sg-tp", SANDGATE_TOOL_POLICY: "github=maybe" })).toThrow(/SANDGATE_TOOL_POLICY entry 1/);
    expect(() => loadConfig({ SANDBOX_DIR: "/tmp/sg-tp", SANDGATE_TOOL_POLICY: "git hub=deny" })).toThrow(/SANDGATE_TOOL_POLICY/);
    const parsed = configSchema.safeParse({ toolPolicy: { rules: { ".x": "deny" } } });
    expect(parsed.success).toBe(false);
  });

  it("the most specific rule wins: the tool's, then the server's, then the default", () => {
    const policy = { default: "allow" as const, rules: { github: "deny" as const, "github.search_issues": "allow" as const, "github.create_issue": "approve" as const } };
    expect(toolPolicyFor(policy, "github", "search_issues")).toEqual({ action: "allow", rule: "github.search_issues" });
    expect(toolPolicyFor(policy, "github", "create_issue")).toEqual({ action: "approve", rule: "github.create_issue" });
    expect(toolPolicyFor(policy, "github", "delete_repo")).toEqual({ action: "deny", rule: "github" });
    expect(toolPolicyFor(policy, "memory", "read_graph")).toEqual({ action: "allow", rule: "default" });
  });
});
