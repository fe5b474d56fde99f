// The governance facade the server builds once and hands to the engine and code mode: the analyzer,
// the approval broker and the event fan-out, each a capability object of its own.

import type { SandgateConfig } from "../config/index.js";
import { Analyzer } from "./analysis/analyzer.js";
import { GovernanceEvents } from "./events.js";
import type { ApprovalBroker } from "./types.js";

export interface GovernanceOptions {
  config: SandgateConfig;
  /** Who decides approvals; without one, anything that needs approval is denied. */
  approvals?: ApprovalBroker;
  events?: GovernanceEvents;
}

/** The broker of a governance built without one: nobody can approve, so nothing waits. */
const NOBODY: ApprovalBroker = {
  request: () => Promise.resolve({ approved: false, by: "none", reason: "no approver is configured" }),
};

export class Governance {
  readonly config: SandgateConfig;
  /** Static analysis of code, per language. */
  readonly analyzer = new Analyzer();
  /** Asks a human whether a run or a tool call may go ahead. */
  readonly approvals: ApprovalBroker;
  /** Where executions, tool calls, file operations, approvals, refusals and anomalies are recorded. */
  readonly events: GovernanceEvents;

  constructor(options: GovernanceOptions) {
    this.config = options.config;
    this.approvals = options.approvals ?? NOBODY;
    this.events = options.events ?? new GovernanceEvents();
  }
}
