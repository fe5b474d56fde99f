// The words of code security that the policy settings (security.*) and every result speak:
// severities, categories, risk levels, actions and levels. Governance decides with them; the core names them.

export const SEVERITIES = ["info", "low", "medium", "high", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

/** What a finding is about. Rules pick one; policy overrides and audit filters are keyed by it. */
export const CATEGORIES = [
  "code-exec",
  "process-exec",
  "deserialization",
  "reverse-shell",
  "download-exec",
  "exfiltration",
  "obfuscation",
  "network",
  "filesystem",
  "resource-abuse",
  "prototype-pollution",
  "privilege",
  "persistence",
] as const;
export type Category = (typeof CATEGORIES)[number];

export const RISK_LEVELS = ["none", "low", "medium", "high", "critical"] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** What policy decides for a run or a tool call. */
export const ACTIONS = ["allow", "warn", "approve", "block"] as const;
export type Action = (typeof ACTIONS)[number];

/** Named policy tables from severities to actions (governance's code-policy.ts), picked by `security.level`. */
export const SECURITY_LEVELS = ["permissive", "standard", "strict"] as const;
export type SecurityLevel = (typeof SECURITY_LEVELS)[number];
