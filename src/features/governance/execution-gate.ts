// The execution gate, governance's run hooks for the engine: analyses the code as the caller wrote it,
// lets the code policy decide (block, ask a human, warn, allow), and records every execution, blocked or run.

import { createHash } from "node:crypto";
import { SandgateError, isSandgateError } from "../../errors/index.js";
import type { ExecutionResult, RunContext, RunHooks, RunVerdict } from "../../execution/index.js";
import type { Language } from "../../languages/index.js";
import { deniedBecause } from "./denial.js";
import { findingRefs } from "./events.js";
import type { Governance } from "./governance.js";
import { decide, type Decision } from "./code-policy.js";
import type { Analysis, Finding, SecuritySummary } from "./types.js";

/** The analysis of one execution and what the policy made of it; `security` goes on the result. */
export interface Verdict extends RunVerdict {
  analysis: Analysis;
  decision: Decision;
  security: SecuritySummary;
}

/** "process-exec at line 3, code-exec at line 7": the findings that drove a decision, briefly. */
export function findingsAt(findings: readonly Finding[], max = 3): string {
  const shown = findings.slice(0, max).map((f) => `${f.ruleId} (${f.severity}) at line ${f.line}`);
  const more = findings.length > max ? `, and ${findings.length - max} more` : "";
  return shown.join(", ") + more;
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

export class ExecutionGate implements RunHooks<Verdict> {
  constructor(private readonly governance: Governance) {}

  /** The gate of an engine's governance, when it has one and it is switched on (security.enabled). */
  static of(governance: Governance | undefined): ExecutionGate | undefined {
    return governance?.config.security.enabled ? new ExecutionGate(governance) : undefined;
  }

  /** Analyses the code and applies the policy; nothing is refused yet (see admit). */
  async judge(context: RunContext): Promise<Verdict> {
    const analysis = await this.governance.analyzer.analyze(context.language, context.code, { owner: context.owner });
    const decision = decide(analysis, this.governance.config.security);
    const shown = this.governance.config.security.findingsShown;
    const security: SecuritySummary = {
      risk: analysis.risk,
      level: analysis.level,
      action: decision.action,
      findings: analysis.findings.slice(0, shown),
      ...(analysis.findings.length > shown ? { totalFindings: analysis.findings.length } : {}),
    };
    return { context, analysis, decision, security, heldAtAdmit: decision.action === "block" || decision.action === "approve" };
  }

  /**
   * Refuses a blocked verdict (POLICY_BLOCKED) and, unless `blockOnly`, asks a human about one that
   * needs approval (APPROVAL_DENIED when denied); each refusal is recorded before it is thrown.
   */
  async admit(verdict: Verdict, blockOnly = false): Promise<void> {
    const { context, analysis, decision } = verdict;
    if (decision.action === "block") {
      const reason = `the ${this.levelOf(context.language)} security policy blocks this ${context.language} code: ${findingsAt(decision.because)}`;
      await this.governance.events.record({
        kind: "policy_block",
        client: context.owner,
        sessionId: context.sessionId,
        executionId: context.executionId,
        subject: "execution",
        language: context.language,
        risk: analysis.risk,
        findings: findingRefs(decision.because),
        reason,
      });
      await this.recordEnd(verdict, "blocked", 0, undefined, reason);
      throw new SandgateError("POLICY_BLOCKED", `${reason}; change the code, or ask an admin to change the policy (security.level and security.categories; GET /security/policy, the sandgate://security-policy resource and sandgate config --print show it)`, {
        data: { risk: analysis.risk, level: analysis.level, findings: decision.because, executionId: context.executionId },
      });
    }
    if (decision.action !== "approve" || blockOnly) return;
    const summary = `run ${context.language} code with risk ${analysis.risk} (${findingsAt(decision.because)})`;
    const answer = await this.governance.approvals.request(
      {
        kind: "execution",
        client: context.owner,
        sessionId: context.sessionId,
        executionId: context.executionId,
        summary,
        details: { language: context.language, risk: analysis.risk, level: analysis.level, findings: decision.because, code: context.code },
      },
      { approver: context.approver, signal: context.signal, onWaiting: context.onWaiting },
    );
    if (answer.approved) {
      verdict.security.approvedBy = answer.by;
      return;
    }
    const why = deniedBecause(answer);
    const message = `this ${context.language} code needed approval (${findingsAt(decision.because)}) and was not approved: ${why}`;
    await this.recordEnd(verdict, "denied", 0, undefined, message);
    throw new SandgateError("APPROVAL_DENIED", message, {
      data: { by: answer.by, ...(answer.reason ? { reason: answer.reason } : {}), risk: analysis.risk, findings: decision.because, executionId: context.executionId },
    });
  }

  /** Waits for the audit to have room for the run's row (AUDIT_UNAVAILABLE when it has none in time): code never runs unrecorded. */
  async roomToRecord(): Promise<void> {
    await this.governance.events.admit();
  }

  /** Records the execution once it ended: its result, or the error it threw. */
  async recordRun(verdict: Verdict, durationMs: number, result: ExecutionResult | undefined, error?: unknown): Promise<void> {
    const status = result?.status ?? (isSandgateError(error) ? error.code.toLowerCase() : "failed");
    const message = result?.error?.message ?? (error instanceof Error ? error.message : undefined);
    await this.recordEnd(verdict, status, durationMs, result, message);
  }

  private async recordEnd(verdict: Verdict, status: string, durationMs: number, result: ExecutionResult | undefined, error: string | undefined): Promise<void> {
    const { context, analysis, decision } = verdict;
    await this.governance.events.record({
      kind: "execution",
      client: context.owner,
      sessionId: context.sessionId,
      executionId: context.executionId,
      language: context.language,
      code: context.code,
      codeHash: sha256(context.code),
      risk: analysis.risk,
      level: analysis.level,
      action: decision.action,
      findings: findingRefs(analysis.findings),
      status,
      durationMs: Math.round(durationMs),
      background: context.background,
      stdoutBytes: result ? Buffer.byteLength(result.stdout, "utf8") : 0,
      stderrBytes: result ? Buffer.byteLength(result.stderr, "utf8") : 0,
      tokensReturned: result?.tokens.returned ?? 0,
      tokensInSandbox: result?.tokens.toolResults ?? 0,
      ...(result?.pii ? { pii: result.pii } : {}),
      ...(error !== undefined && status !== "ok" ? { error: error.slice(0, 1000) } : {}),
    });
  }

  private levelOf(language: Language): string {
    const security = this.governance.config.security;
    return security.languages[language]?.level ?? security.level;
  }
}
