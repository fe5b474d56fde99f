// The anomaly rules as pure functions over one client's recent activity: what an event changes in
// it and which rules it trips. No clock of their own and no I/O, so a table of events tests them.

import type { AnomaliesConfig } from "../../config/index.js";
import type { GovernanceEvent } from "./events.js";

/** The rules, each documented in the README's anomaly table. */
export const ANOMALY_RULES = ["burst", "repeated-blocks", "tool-call-volume", "tool-call-errors", "risk-jump"] as const;
export type AnomalyRule = (typeof ANOMALY_RULES)[number];

/** Weight of the newest minute in a client's moving per-minute average of tool calls. */
export const BASELINE_WEIGHT = 0.2;
const MINUTE_MS = 60_000;

/** What the rules remember of one client; every list is bounded by its rule's threshold. */
export interface ClientActivity {
  /** Start times of recent executions, at most burstExecutions + 1 of them. */
  executions: number[];
  /** Times of recent policy blocks and authentication failures, at most blockedAttempts. */
  refusals: number[];
  /** Tool calls and failed ones in the current minute. */
  minute: { start: number; calls: number; errors: number };
  /** Moving average of tool calls per minute over the minutes before this one; absent until one minute has passed. */
  baseline?: number;
  /** Risks of the latest runs, at most riskBaselineRuns of them, oldest first. */
  risks: number[];
}

export interface Trip {
  rule: AnomalyRule;
  detail: string;
}

export function newActivity(now: number): ClientActivity {
  return { executions: [], refusals: [], minute: { start: now, calls: 0, errors: 0 }, risks: [] };
}

/** Keeps the times within `windowMs` of `now`, at most `max` (the newest). */
function within(times: number[], now: number, windowMs: number, max: number): number[] {
  const kept = times.filter((t) => now - t < windowMs);
  return kept.length > max ? kept.slice(kept.length - max) : kept;
}

/** Closes the minutes that have passed: each folds into the baseline, idle ones as zero calls. */
function rollMinutes(activity: ClientActivity, now: number): void {
  const passed = Math.floor((now - activity.minute.start) / MINUTE_MS);
  if (passed <= 0) return;
  const first = activity.minute.calls;
  let baseline = activity.baseline === undefined ? first : activity.baseline * (1 - BASELINE_WEIGHT) + first * BASELINE_WEIGHT;
  // Minutes without any call pull the average down; past ~50 of them it is zero to any precision.
  for (let i = 1; i < Math.min(passed, 64); i += 1) baseline *= 1 - BASELINE_WEIGHT;
  activity.baseline = baseline;
  activity.minute = { start: activity.minute.start + passed * MINUTE_MS, calls: 0, errors: 0 };
}

const round = (n: number): number => Math.round(n * 10) / 10;

/** Updates `activity` with `event` (seen at `now`) and returns the rules it trips, before any cooldown. */
export function observe(activity: ClientActivity, event: GovernanceEvent, now: number, config: AnomaliesConfig): Trip[] {
  const trips: Trip[] = [];
  switch (event.kind) {
    case "execution": {
      const windowMs = config.burstWindowS * 1000;
      activity.executions = within([...activity.executions, now], now, windowMs, config.burstExecutions + 1);
      if (activity.executions.length > config.burstExecutions) {
        trips.push({ rule: "burst", detail: `more than ${config.burstExecutions} executions within ${config.burstWindowS} s` });
      }
      const history = activity.risks;
      if (history.length >= config.riskBaselineRuns) {
        const average = history.reduce((sum, r) => sum + r, 0) / history.length;
        if (average < config.riskBaseline && event.risk >= config.riskJump) {
          trips.push({ rule: "risk-jump", detail: `code of risk ${event.risk} (${event.level}) after ${history.length} runs averaging ${round(average)}` });
        }
      }
      activity.risks = [...history, event.risk].slice(-config.riskBaselineRuns);
      break;
    }
    case "policy_block":
    case "auth_failure": {
      const windowMs = config.blockedWindowS * 1000;
      // A counted auth_failure row stands for `count` refusals (at most blockedAttempts matter).
      const count = event.kind === "auth_failure" ? Math.min(event.count ?? 1, config.blockedAttempts) : 1;
      activity.refusals = within([...activity.refusals, ...Array<number>(count).fill(now)], now, windowMs, config.blockedAttempts);
      if (activity.refusals.length >= config.blockedAttempts) {
        trips.push({ rule: "repeated-blocks", detail: `${activity.refusals.length} policy blocks or authentication failures within ${config.blockedWindowS} s (latest: ${event.kind})` });
      }
      break;
    }
    case "tool_call": {
      rollMinutes(activity, now);
      const minute = activity.minute;
      minute.calls += 1;
      if (event.outcome !== "ok") minute.errors += 1;
      const baseline = activity.baseline;
      if (baseline !== undefined && minute.calls > config.toolCallMinCalls && minute.calls > config.toolCallFactor * baseline) {
        trips.push({ rule: "tool-call-volume", detail: `${minute.calls} tool calls this minute against a moving average of ${round(baseline)} per minute` });
      }
      if (minute.calls >= config.errorMinCalls && minute.errors / minute.calls > config.errorRate) {
        trips.push({ rule: "tool-call-errors", detail: `${minute.errors} of ${minute.calls} tool calls failed this minute` });
      }
      break;
    }
    case "file":
    case "approval":
    case "anomaly":
      break;
  }
  return trips;
}
