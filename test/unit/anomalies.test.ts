// The anomaly rules as tables of events on a fake clock: each rule trips exactly when its documented
// threshold is crossed, alerts once per cooldown, throttles when asked, and forgets old clients.

import { describe, expect, it } from "vitest";
import { defaultConfig, type AnomaliesConfig } from "../../src/config/index.js";
import { AnomalyDetector, GovernanceEvents, type AnomalyEvent, type GovernanceEvent, type NewGovernanceEvent } from "../../src/features/governance/index.js";

const DEFAULTS: AnomaliesConfig = defaultConfig().anomalies;

function execution(client: string, risk = 0): NewGovernanceEvent {
  return {
    kind: "execution",
    client,
    language: "python",
    code: "print(1)",
    codeHash: "0".repeat(64),
    risk,
    level: risk >= 60 ? "high" : "none",
    action: "allow",
    findings: [],
    status: "ok",
    durationMs: 5,
    background: false,
    stdoutBytes: 2,
    stderrBytes: 0,
    tokensReturned: 1,
    tokensInSandbox: 0,
  };
}

function toolCall(client: string, outcome: "ok" | "error" = "ok"): NewGovernanceEvent {
  return { kind: "tool_call", client, tool: "github.search", server: "github", action: "allow", outcome, argsBytes: 2, argsHash: "h", durationMs: 3 };
}

const blocked = (client: string): NewGovernanceEvent => ({ kind: "policy_block", client, subject: "execution", findings: [], reason: "blocked" });
const refused = (client: string): NewGovernanceEvent => ({ kind: "auth_failure", client, reason: "invalid_key", route: "POST /execute" });

/** A detector on a fake clock, subscribed to its own event fan-out, and the anomalies it recorded. */
function harness(overrides: Partial<AnomaliesConfig> = {}): {
  at: (ms: number) => void;
  advance: (ms: number) => void;
  send: (event: NewGovernanceEvent, times?: number) => Promise<void>;
  anomalies: AnomalyEvent[];
  detector: AnomalyDetector;
} {
  let now = 1_700_000_000_000;
  const events = new GovernanceEvents();
  const detector = new AnomalyDetector({ config: { ...DEFAULTS, ...overrides }, events, now: () => now });
  const seen: GovernanceEvent[] = [];
  events.subscribe(detector);
  events.subscribe({ record: (event) => void seen.push(event) });
  return {
    at: (ms) => (now = 1_700_000_000_000 + ms),
    advance: (ms) => (now += ms),
    send: async (event, times = 1) => {
      for (let i = 0; i < times; i += 1) await events.record({ ...event, time: now });
    },
    get anomalies() {
      return seen.filter((e): e is AnomalyEvent => e.kind === "anomaly");
    },
    detector,
  };
}

const rules = (list: AnomalyEvent[]): string[] => list.map((a) => a.rule);

describe("anomaly rule: burst", () => {
  it.each([
    { name: "30 executions within 10 s", count: 30, spacingMs: 100, alerts: 0 },
    { name: "31 executions within 10 s", count: 31, spacingMs: 100, alerts: 1 },
    { name: "31 executions spread over 15 s", count: 31, spacingMs: 500, alerts: 0 },
    { name: "100 executions within 10 s (one alert per cooldown)", count: 100, spacingMs: 50, alerts: 1 },
  ])("$name -> $alerts alert(s)", async ({ count, spacingMs, alerts }) => {
    const h = harness();
    for (let i = 0; i < count; i += 1) {
      await h.send(execution("key:a"));
      h.advance(spacingMs);
    }
    expect(rules(h.anomalies)).toEqual(Array<string>(alerts).fill("burst"));
    if (alerts > 0) expect(h.anomalies[0]).toMatchObject({ client: "key:a", detail: expect.stringMatching(/more than 30 executions within 10 s/) });
  });

  it("alerts again for a burst after the cooldown, and for another client at once", async () => {
    const h = harness();
    await h.send(execution("key:a"), 31);
    h.advance(DEFAULTS.cooldownS * 1000 - 1000);
    await h.send(execution("key:a"), 31);
    await h.send(execution("key:b"), 31);
    expect(h.anomalies.map((a) => `${a.client} ${a.rule}`)).toEqual(["key:a burst", "key:b burst"]);
    h.advance(2000);
    await h.send(execution("key:a"), 31);
    expect(h.anomalies.map((a) => `${a.client} ${a.rule}`)).toEqual(["key:a burst", "key:b burst", "key:a burst"]);
  });
});

describe("anomaly rule: repeated-blocks", () => {
  it.each([
    { name: "4 policy blocks in 5 min", events: [0, 60, 120, 180].map((s) => ({ s, kind: "block" })), alerts: 0 },
    { name: "5 policy blocks in 5 min", events: [0, 60, 120, 180, 240].map((s) => ({ s, kind: "block" })), alerts: 1 },
    { name: "3 blocks and 2 auth failures in 5 min", events: [0, 10, 20, 30, 40].map((s, i) => ({ s, kind: i % 2 ? "auth" : "block" })), alerts: 1 },
    { name: "5 blocks spread over 6 min", events: [0, 90, 180, 270, 360].map((s) => ({ s, kind: "block" })), alerts: 0 },
  ])("$name -> $alerts alert(s)", async ({ events, alerts }) => {
    const h = harness();
    for (const { s, kind } of events) {
      h.at(s * 1000);
      await h.send(kind === "auth" ? refused("peer:10.0.0.9") : blocked("peer:10.0.0.9"));
    }
    expect(rules(h.anomalies)).toEqual(Array<string>(alerts).fill("repeated-blocks"));
  });
});

describe("anomaly rule: tool-call-volume", () => {
  /** Sends `perMinute[i]` tool calls in minute i. */
  async function minutes(h: ReturnType<typeof harness>, perMinute: number[]): Promise<void> {
    for (const [i, calls] of perMinute.entries()) {
      h.at(i * 60_000);
      for (let c = 0; c < calls; c += 1) {
        await h.send(toolCall("mcp:x"));
        h.advance(10);
      }
    }
  }

  it.each([
    { name: "3 a minute, then 21 in a minute", perMinute: [3, 3, 3, 21], alerts: 1 },
    { name: "3 a minute, then 20 in a minute (not above 20)", perMinute: [3, 3, 3, 20], alerts: 0 },
    { name: "a steady 40 a minute", perMinute: [40, 40, 40, 40, 40], alerts: 0 },
    { name: "40 a minute, then 100 (under 5x)", perMinute: [40, 40, 40, 100], alerts: 0 },
    { name: "a new client's first minute of 50 (no baseline yet)", perMinute: [50], alerts: 0 },
    { name: "3 a minute, idle 10 minutes, then 25", perMinute: [3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25], alerts: 1 },
  ])("$name -> $alerts alert(s)", async ({ perMinute, alerts }) => {
    const h = harness();
    await minutes(h, perMinute);
    expect(rules(h.anomalies)).toEqual(Array<string>(alerts).fill("tool-call-volume"));
  });
});

describe("anomaly rule: tool-call-errors", () => {
  it.each([
    { name: "6 of 10 calls failed", ok: 4, failed: 6, alerts: 1 },
    { name: "5 of 10 calls failed (not above 50%)", ok: 5, failed: 5, alerts: 0 },
    { name: "9 of 9 calls failed (under 10 calls)", ok: 0, failed: 9, alerts: 0 },
  ])("$name -> $alerts alert(s)", async ({ ok, failed, alerts }) => {
    const h = harness();
    await h.send(toolCall("key:a", "ok"), ok);
    await h.send(toolCall("key:a", "error"), failed);
    expect(rules(h.anomalies)).toEqual(Array<string>(alerts).fill("tool-call-errors"));
  });
});

describe("anomaly rule: risk-jump", () => {
  it.each([
    { name: "20 runs of risk 0, then risk 70", history: Array<number>(20).fill(0), next: 70, alerts: 1 },
    { name: "20 runs of risk 0, then risk 60", history: Array<number>(20).fill(0), next: 60, alerts: 1 },
    { name: "20 runs of risk 0, then risk 55", history: Array<number>(20).fill(0), next: 55, alerts: 0 },
    { name: "only 19 runs before, then risk 90", history: Array<number>(19).fill(0), next: 90, alerts: 0 },
    { name: "20 runs averaging 12, then risk 90", history: Array<number>(20).fill(12), next: 90, alerts: 0 },
    { name: "40 runs, the last 20 of risk 5, then risk 80", history: [...Array<number>(20).fill(50), ...Array<number>(20).fill(5)], next: 80, alerts: 1 },
  ])("$name -> $alerts alert(s)", async ({ history, next, alerts }) => {
    const h = harness();
    for (const risk of history) {
      await h.send(execution("key:a", risk));
      h.advance(60_000);
    }
    await h.send(execution("key:a", next));
    expect(rules(h.anomalies)).toEqual(Array<string>(alerts).fill("risk-jump"));
  });
});

describe("anomaly detector", () => {
  it("ignores anomaly events, so an alert never feeds the rules again", async () => {
    const h = harness({ burstExecutions: 1, blockedAttempts: 1 });
    await h.send({ kind: "anomaly", client: "key:a", rule: "burst", detail: "from elsewhere" }, 50);
    expect(h.anomalies).toHaveLength(50);
    expect(h.detector.clientCount).toBe(0);
  });

  it("throttles an alerted client for throttleS and says so in the anomaly event", async () => {
    const h = harness({ throttleS: 30 });
    expect(h.detector.throttledFor("key:a")).toBeUndefined();
    await h.send(execution("key:a"), 31);
    expect(h.anomalies[0]).toMatchObject({ rule: "burst", throttledForS: 30 });
    expect(h.detector.throttledFor("key:a")).toBe(30);
    expect(h.detector.throttledFor("key:b")).toBeUndefined();
    expect(h.detector.throttledCount()).toBe(1);
    h.advance(29_500);
    expect(h.detector.throttledFor("key:a")).toBe(1);
    h.advance(1000);
    expect(h.detector.throttledFor("key:a")).toBeUndefined();
  });

  it("alerts without throttling when throttleS is 0", async () => {
    const h = harness();
    await h.send(execution("key:a"), 31);
    expect(h.anomalies[0]?.throttledForS).toBeUndefined();
    expect(h.detector.throttledFor("key:a")).toBeUndefined();
  });

  it("keeps at most maxClients clients, forgetting the least recently seen", async () => {
    const h = harness({ maxClients: 16, burstExecutions: 2 });
    await h.send(execution("key:first"), 2);
    for (let i = 0; i < 10_000; i += 1) await h.send(execution(`peer:10.0.${i >> 8}.${i & 255}`));
    expect(h.detector.clientCount).toBe(16);
    // key:first was forgotten: its two runs no longer count toward a burst.
    await h.send(execution("key:first"));
    expect(h.anomalies).toHaveLength(0);
    await h.send(execution("key:first"), 2);
    expect(rules(h.anomalies)).toEqual(["burst"]);
  });
});
