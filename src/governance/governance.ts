// The governance facade the server builds once and hands to the engine and code mode: the analyzer,
// the approval broker and the event fan-out, each a capability object of its own.

import type { SandgateConfig } from "../config/index.js";
import { Analyzer } from "./analysis/analyzer.js";
import { GovernanceEvents } from "./events.js";
import type { ApprovalBroker } from "./types.js";

export interface GovernanceOptions {
  config: SandgateConfig;
  approvals: ApprovalBroker;
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

  private constructor(analyzer: Analyzer, options: GovernanceOptions) {
    this.config = options.config;
    this.analyzer = analyzer;
    this.approvals = options.approvals;
    this.events = options.events ?? new GovernanceEvents();
  }

  static async create(options: GovernanceOptions): Promise<Governance> {
    return new Governance(await Analyzer.create(), options);
  }
}
