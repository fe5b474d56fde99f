// The governance facade the app builds once and hands to code mode, and whose hooks the engine runs through: the analyzer,
// the approval broker and the event fan-out, each a capability object of its own.

import type { SandgateConfig } from "../../config/index.js";
import type { EngineHooks } from "../../execution/index.js";
import { Analyzer } from "./analysis/analyzer.js";
import { ApprovalQueue } from "./approval-queue.js";
import { GovernanceEvents } from "./events.js";
import { ExecutionGate } from "./execution-gate.js";
import type { ApprovalBroker } from "./types.js";

export interface GovernanceOptions {
  config: SandgateConfig;
  /** Who decides approvals; default an ApprovalQueue (the client's elicitation, else GET/POST /approvals). */
  approvals?: ApprovalBroker;
  events?: GovernanceEvents;
}

export class Governance {
  readonly config: SandgateConfig;
  /** Static analysis of code, per language. */
  readonly analyzer: Analyzer;
  /** Asks a human whether a run or a tool call may go ahead. */
  readonly approvals: ApprovalBroker;
  /** Where executions, tool calls, file operations, approvals, refusals and anomalies are recorded. */
  readonly events: GovernanceEvents;

  constructor(options: GovernanceOptions) {
    this.config = options.config;
    this.analyzer = new Analyzer({ timeoutMs: options.config.security.analysisTimeoutMs });
    this.events = options.events ?? new GovernanceEvents();
    this.approvals = options.approvals ?? new ApprovalQueue({ config: options.config, events: this.events });
  }

  /**
   * What the engine calls around each run and file operation (Engine.create's `hooks`): file
   * operations are always recorded, runs are judged and recorded while security.enabled.
   */
  engineHooks(): EngineHooks {
    const runs = ExecutionGate.of(this);
    return { ...(runs ? { runs } : {}), files: this.events };
  }
}
