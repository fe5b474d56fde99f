// The upstream tool policy as a pure decision: which action the config gives a call to one tool,
// and which rule gave it (the most specific: "server.tool", then "server", then the default).

import type { ToolAction, ToolPolicyConfig } from "../../config/index.js";

export interface ToolPolicyDecision {
  action: ToolAction;
  /** The rule's key ("server.tool" or "server"), or "default". */
  rule: string;
}

/** How restrictive a tool action is: deny > approve > allow. */
const RANK: Record<ToolAction, number> = { allow: 0, approve: 1, deny: 2 };

/**
 * The action for a call to tool `name` of upstream server `server`. `aliases` are the other names the
 * catalog accepts for the tool (its TypeScript and Python wrapper names): a rule written with any of
 * them applies, and where rules for several names disagree the most restrictive wins.
 */
export function toolPolicyFor(policy: ToolPolicyConfig, server: string, name: string, aliases: readonly string[] = []): ToolPolicyDecision {
  let found: ToolPolicyDecision | undefined;
  for (const each of [name, ...aliases]) {
    const key = `${server}.${each}`;
    const action = Object.hasOwn(policy.rules, key) ? policy.rules[key] : undefined;
    if (action !== undefined && (found === undefined || RANK[action] > RANK[found.action])) found = { action, rule: key };
  }
  if (found) return found;
  const forServer = Object.hasOwn(policy.rules, server) ? policy.rules[server] : undefined;
  if (forServer !== undefined) return { action: forServer, rule: server };
  return { action: policy.default, rule: "default" };
}

/** The policy as /security/policy and sandgate://security-policy show it. */
export function describeToolPolicy(policy: ToolPolicyConfig, servers: readonly string[]): Record<string, unknown> {
  const unknown = Object.keys(policy.rules).filter((key) => !servers.includes(key.split(".")[0] ?? key));
  return {
    default: policy.default,
    rules: { ...policy.rules },
    precedence: "server.tool, then server, then default",
    checked: "on every call sandboxed code makes to an upstream tool; deny fails the call with ToolDenied, approve waits for a person (MCP elicitation, else POST /approvals/{id})",
    ...(unknown.length > 0 ? { rules_for_unconfigured_servers: unknown } : {}),
  };
}
