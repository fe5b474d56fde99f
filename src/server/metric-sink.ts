// Governance events as Prometheus counters and histograms: executions, tool calls, tokens kept out
// of the agent's context, risk, policy, approvals, refusals, file operations and anomalies.

import { Counter, Histogram, type Registry } from "prom-client";
import type { EventSink, GovernanceEvent } from "../features/governance/index.js";

/** Seconds: from a quick stateless call to the longest time limit. */
export const DURATION_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const RISK_BUCKETS = [0, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100];

/** A label value from server code that must stay one of a few words: anything else is "other". */
export function word(value: string | undefined): string {
  return value !== undefined && /^[a-z][a-z0-9_-]{0,31}$/.test(value) ? value : "other";
}

/**
 * Counts every event it is handed. Labels take values from closed sets only (languages, statuses,
 * configured server names): never a client, a session or a tool name a caller made up.
 */
export class MetricSink implements EventSink {
  private readonly executions: Counter<"language" | "status">;
  private readonly executionSeconds: Histogram<"language">;
  private readonly tokensSaved: Counter<"language">;
  private readonly tokensReturned: Counter<"language">;
  private readonly risk: Histogram<"language">;
  private readonly policyActions: Counter<"action" | "language">;
  private readonly policyBlocks: Counter<"subject">;
  private readonly toolCalls: Counter<"server" | "outcome">;
  private readonly toolCallSeconds: Histogram<"server">;
  private readonly approvals: Counter<"subject" | "decision">;
  private readonly authFailures: Counter<"reason">;
  private readonly files: Counter<"operation" | "outcome">;
  private readonly anomalies: Counter<"rule">;
  private readonly piiTokens: Counter<"type">;

  /** `servers`: the configured upstream server names, the only values the server label takes besides "unknown". */
  constructor(
    registry: Registry,
    private readonly servers: ReadonlySet<string>,
  ) {
    const registers = [registry];
    this.executions = new Counter({ name: "sandgate_executions_total", help: "Executions by language and status (ok, error, timeout, ... or why they did not run)", labelNames: ["language", "status"], registers });
    this.executionSeconds = new Histogram({ name: "sandgate_execution_duration_seconds", help: "Wall time of executions by language", labelNames: ["language"], buckets: DURATION_BUCKETS, registers });
    this.tokensSaved = new Counter({
      name: "sandgate_tokens_saved_total",
      help: "Tokens of tool results and output that stayed in the sandbox instead of the agent's context",
      labelNames: ["language"],
      registers,
    });
    this.tokensReturned = new Counter({ name: "sandgate_tokens_returned_total", help: "Tokens of output returned to the agent", labelNames: ["language"], registers });
    this.risk = new Histogram({ name: "sandgate_analysis_risk", help: "Risk score (0-100) of the static analysis of executed code, by language", labelNames: ["language"], buckets: RISK_BUCKETS, registers });
    this.policyActions = new Counter({ name: "sandgate_policy_actions_total", help: "What the code policy decided for executions (allow, warn, approve, block)", labelNames: ["action", "language"], registers });
    this.policyBlocks = new Counter({ name: "sandgate_policy_blocks_total", help: "Executions and tool calls the policy refused", labelNames: ["subject"], registers });
    this.toolCalls = new Counter({ name: "sandgate_tool_calls_total", help: "Upstream tool calls made from sandboxed code, by server and outcome", labelNames: ["server", "outcome"], registers });
    this.toolCallSeconds = new Histogram({ name: "sandgate_tool_call_duration_seconds", help: "Duration of upstream tool calls by server", labelNames: ["server"], buckets: DURATION_BUCKETS, registers });
    this.approvals = new Counter({ name: "sandgate_approvals_total", help: "Approval requests and decisions", labelNames: ["subject", "decision"], registers });
    this.authFailures = new Counter({ name: "sandgate_auth_failures_total", help: "Requests refused at the door, by reason", labelNames: ["reason"], registers });
    this.files = new Counter({ name: "sandgate_file_operations_total", help: "Workspace file operations by operation and outcome", labelNames: ["operation", "outcome"], registers });
    this.anomalies = new Counter({ name: "sandgate_anomalies_total", help: "Anomaly alerts by rule", labelNames: ["rule"], registers });
    this.piiTokens = new Counter({ name: "sandgate_pii_tokens_total", help: "Personal data values replaced by tokens in what reached the agent, by kind", labelNames: ["type"], registers });
  }

  record(event: GovernanceEvent): void {
    switch (event.kind) {
      case "execution": {
        const language = event.language;
        this.executions.inc({ language, status: word(event.status) });
        this.executionSeconds.observe({ language }, event.durationMs / 1000);
        this.tokensSaved.inc({ language }, Math.max(0, event.tokensInSandbox));
        this.tokensReturned.inc({ language }, Math.max(0, event.tokensReturned));
        this.risk.observe({ language }, event.risk);
        this.policyActions.inc({ action: event.action, language });
        // Kinds are built-in or named in the config: a closed set.
        for (const [type, n] of Object.entries(event.pii ?? {})) this.piiTokens.inc({ type: word(type.toLowerCase()) }, n);
        break;
      }
      case "tool_call": {
        const server = event.server !== undefined && this.servers.has(event.server) ? event.server : "unknown";
        this.toolCalls.inc({ server, outcome: event.outcome });
        this.toolCallSeconds.observe({ server }, event.durationMs / 1000);
        break;
      }
      case "policy_block":
        this.policyBlocks.inc({ subject: event.subject });
        break;
      case "approval":
        this.approvals.inc({ subject: event.subject, decision: event.decision });
        break;
      case "auth_failure":
        this.authFailures.inc({ reason: event.reason }, event.count ?? 1);
        break;
      case "file":
        this.files.inc({ operation: event.operation, outcome: event.outcome });
        break;
      case "anomaly":
        this.anomalies.inc({ rule: word(event.rule) });
        break;
    }
  }
}
