// Governance events: every site that runs, calls, decides or refuses records one event here; sinks
// (the audit, the metrics, the anomaly rules) subscribe. The events' shapes are the store's (audit-events.ts).

import type { EventSink, FindingRef, GovernanceEvent, NewGovernanceEvent } from "../../store/index.js";
import type { Finding } from "./types.js";

export type {
  AnomalyEvent,
  ApprovalEvent,
  AuthFailureEvent,
  EventSink,
  ExecutionEvent,
  FileEvent,
  FindingRef,
  GovernanceEvent,
  GovernanceEventKind,
  NewGovernanceEvent,
  PolicyBlockEvent,
  ToolCallEvent,
} from "../../store/index.js";

export function findingRefs(findings: readonly Finding[]): FindingRef[] {
  return findings.map(({ ruleId, category, severity, line }) => ({ ruleId, category, severity, line }));
}

/** The fan-out from event sites to sinks (audit, metrics, anomalies). */
export class GovernanceEvents {
  private readonly sinks = new Set<EventSink>();

  subscribe(sink: EventSink): () => void {
    this.sinks.add(sink);
    return () => this.sinks.delete(sink);
  }

  /**
   * Hands the event to every sink. Rejects when a sink refuses it (the audit could not take the row
   * in time): the caller then fails its request rather than go on unrecorded.
   */
  async record(event: NewGovernanceEvent): Promise<void> {
    const full: GovernanceEvent = { ...event, time: event.time ?? Date.now() };
    const pending: Promise<void>[] = [];
    for (const sink of this.sinks) {
      const done = sink.record(full);
      if (done) pending.push(done);
    }
    if (pending.length > 0) await Promise.all(pending);
  }

  /** Waits until every sink could record a row (see EventSink.admit); rejects like record. */
  async admit(): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const sink of this.sinks) {
      const done = sink.admit?.();
      if (done) pending.push(done);
    }
    if (pending.length > 0) await Promise.all(pending);
  }
}
