// The anomaly detector: an event sink that runs the rules (anomaly-rules.ts) per client, records one
// `anomaly` event per rule and client per cooldown, and says which clients are throttled.

import type { AnomaliesConfig } from "../../config/index.js";
import { newActivity, observe, type AnomalyRule, type ClientActivity } from "./anomaly-rules.js";
import type { EventSink, GovernanceEvent, GovernanceEvents } from "./events.js";

export interface AnomalyDetectorOptions {
  config: AnomaliesConfig;
  /** Where alerts are recorded (the same fan-out the detector listens to). */
  events: GovernanceEvents;
  /** Milliseconds since the epoch; tests pass a fake clock. */
  now?: () => number;
}

interface ClientState {
  activity: ClientActivity;
  /** When each rule last alerted for this client. */
  alerted: Map<AnomalyRule, number>;
  throttledUntil: number;
}

export class AnomalyDetector implements EventSink {
  private readonly config: AnomaliesConfig;
  private readonly events: GovernanceEvents;
  private readonly now: () => number;
  /** Insertion order is recency: a client seen again moves to the end, the first one is forgotten first. */
  private readonly clients = new Map<string, ClientState>();
  /**
   * Throttled clients until when, apart from `clients`: a flood of new identities (anonymous MCP
   * sessions, peers with bad keys) pushes old clients out of it, and must not lift a throttle.
   */
  private readonly throttled = new Map<string, number>();

  constructor(options: AnomalyDetectorOptions) {
    this.config = options.config;
    this.events = options.events;
    this.now = options.now ?? Date.now;
  }

  /** Clients whose activity is remembered (at most config.maxClients). */
  get clientCount(): number {
    return this.clients.size;
  }

  /**
   * Runs the rules on `event`. Alerts are recorded before this returns, so an audit that cannot take
   * the anomaly row fails the request that caused it. Anomaly events themselves are not observed.
   */
  async record(event: GovernanceEvent): Promise<void> {
    if (event.kind === "anomaly") return;
    const now = this.now();
    const state = this.stateOf(event.client, now);
    const trips = observe(state.activity, event, now, this.config);
    for (const trip of trips) {
      const last = state.alerted.get(trip.rule);
      if (last !== undefined && now - last < this.config.cooldownS * 1000) continue;
      state.alerted.set(trip.rule, now);
      const throttle = this.config.throttleS;
      if (throttle > 0) {
        state.throttledUntil = Math.max(state.throttledUntil, now + throttle * 1000);
        this.throttle(event.client, state.throttledUntil, now);
      }
      await this.events.record({
        kind: "anomaly",
        client: event.client,
        rule: trip.rule,
        detail: trip.detail,
        ...(event.sessionId !== undefined ? { sessionId: event.sessionId } : {}),
        ...(event.executionId !== undefined ? { executionId: event.executionId } : {}),
        ...(throttle > 0 ? { throttledForS: throttle } : {}),
      });
    }
  }

  /** Seconds until `client` may run code again, when an anomaly throttled it; undefined when it may. */
  throttledFor(client: string): number | undefined {
    const until = this.throttled.get(client);
    if (until === undefined) return undefined;
    const left = until - this.now();
    if (left > 0) return Math.ceil(left / 1000);
    this.throttled.delete(client);
    return undefined;
  }

  /** Clients throttled right now. */
  throttledCount(): number {
    this.forgetLifted(this.now());
    return this.throttled.size;
  }

  private throttle(client: string, until: number, now: number): void {
    this.throttled.set(client, until);
    // Throttles that ended go as new ones come, so the map holds only the ones running.
    if (this.throttled.size > this.config.maxClients) this.forgetLifted(now);
  }

  private forgetLifted(now: number): void {
    for (const [client, until] of this.throttled) if (until <= now) this.throttled.delete(client);
  }

  private stateOf(client: string, now: number): ClientState {
    const found = this.clients.get(client);
    if (found) {
      this.clients.delete(client);
      this.clients.set(client, found);
      return found;
    }
    const state: ClientState = { activity: newActivity(now), alerted: new Map(), throttledUntil: 0 };
    this.clients.set(client, state);
    while (this.clients.size > this.config.maxClients) {
      const oldest = this.clients.keys().next().value;
      if (oldest === undefined) break;
      this.clients.delete(oldest);
    }
    return state;
  }
}
