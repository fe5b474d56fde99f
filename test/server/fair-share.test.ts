// Fair sharing of the server-wide caps between callers, through the real server on port 0 with
// real sandboxes: no caller holds every sandbox or every session slot, idle ones give way.

import { afterEach, describe, expect, it } from "vitest";
import type { WireExecutionResult } from "../../src/server/wire.js";
import { createTestEngine, sleep, waitFor, type TestEngine } from "../helpers.js";
import { bearer, expectError, withServer as withTestServer, type Api, type Reply } from "../server-helpers.js";

const KEYS = { alice: "alice-key-0123456789", bob: "bob-key-0123456789ab", carol: "carol-key-0123456789" };
type Who = keyof typeof KEYS;
const as = (who: Who): Record<string, string> => bearer(KEYS[who]);

let fx: TestEngine | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function withServer(env: Record<string, string>, fn: (api: Api, url: string) => Promise<void>, keys: Record<string, string> = KEYS): Promise<void> {
  fx = createTestEngine(env, { python: 0, javascript: 0, bash: 0 });
  await withTestServer(fx, { apiKeys: keys, maxConcurrentPerClient: 16 }, (server, api) => fn(api, server.url));
}

function run(api: Api, who: Who, args: Record<string, unknown>): Promise<Reply<WireExecutionResult>> {
  return api<WireExecutionResult>("/execute", { json: { language: "bash", ...args }, headers: as(who) });
}

describe("fair sharing of sandboxes between callers", () => {
  it("a caller keeping its sessions alive cannot keep another out: its idle sandbox gives way at once, its running call is never killed", async () => {
    // 3 sandboxes, at most 2 per caller; idle eviction by age alone would take 10 minutes.
    await withServer({ SANDGATE_MAX_SANDBOXES: "3", SANDGATE_EVICT_IDLE_AFTER: "600", SANDGATE_QUEUE_WAIT: "15" }, async (api) => {
      expect((await run(api, "carol", { code: "c=1", session_id: "c1" })).status).toBe(200);
      expect((await run(api, "alice", { code: "a=2", session_id: "a2" })).status).toBe(200);
      const long = run(api, "alice", { code: "sleep 3; echo done", session_id: "a1" });
      let pinging = true;
      const pings = (async () => {
        const seen: Reply<WireExecutionResult>[] = [];
        while (pinging) seen.push(await run(api, "alice", { code: "echo ping", session_id: "a2" }));
        return seen;
      })();
      try {
        // Every slot taken (carol 1, alice 2) before bob asks.
        expect(await waitFor(() => fx?.engine.admissionState().sandboxes === 3, 20_000)).toBe(true);
        // Full: carol 1, alice 2. Bob holds none, alice two more: alice's idle sandbox gives way, not carol's older one.
        const bob = await run(api, "bob", { code: "echo bob" });
        expect(bob.status, JSON.stringify(bob.body)).toBe(200);
        expect(bob.body.stdout).toBe("bob\n");
        const done = await long;
        expect(done.body.status).toBe("ok");
        expect(done.body.stdout).toBe("done\n");
      } finally {
        pinging = false;
      }
      const seen = await pings;
      for (const ping of seen) expect(ping.body.status).toBe("ok");
      expect(seen.some((p) => p.body.state_reset === true)).toBe(true);
      const carol = await run(api, "carol", { code: "echo ${c}", session_id: "c1" });
      expect(carol.body.stdout).toBe("1\n");
      expect(carol.body.state_reset).toBeUndefined();
    });
  }, 90_000);

  it("a caller at its share of the sandboxes waits for its own, and its 429 says honestly how long that takes", async () => {
    await withServer({ SANDGATE_MAX_SANDBOXES: "3", SANDGATE_EVICT_IDLE_AFTER: "600", SANDGATE_QUEUE_WAIT: "1" }, async (api) => {
      for (const id of ["a1", "a2"]) expect((await run(api, "alice", { code: "true", session_id: id })).status).toBe(200);
      const third = await run(api, "alice", { code: "echo three", session_id: "a3" });
      const error = expectError(third, 429, "TOO_MANY_REQUESTS");
      expect(error.message).toMatch(/the most one caller may hold/);
      // Her sandboxes become evictable after 600 s idle; that is the wait, not the 1 s queue wait.
      const retry = Number(third.headers.get("retry-after"));
      expect(retry).toBeGreaterThan(500);
      expect(retry).toBeLessThanOrEqual(600);
      // The third slot is still there for someone else.
      expect((await run(api, "bob", { code: "echo bob" })).body.stdout).toBe("bob\n");
    });
  }, 60_000);
});

describe("fair sharing of session slots between callers", () => {
  it("at the server's session maximum the caller holding the most gives up its least recently used idle session, with a reason it can read", async () => {
    await withServer(
      { SANDGATE_MAX_SESSIONS: "4", SANDGATE_SESSIONS_PER_CALLER: "4", SANDGATE_EVICT_IDLE_AFTER: "1", SANDGATE_SESSION_TTL: "300", SANDGATE_MAX_SANDBOXES: "8" },
      async (api) => {
        for (const id of ["s1", "s2", "s3", "s4"]) expect((await run(api, "alice", { code: `v=${id}`, session_id: id })).status).toBe(200);
        await sleep(1500);
        for (const id of ["s2", "s3"]) expect((await run(api, "alice", { code: "true", session_id: id })).status).toBe(200);
        const busy = run(api, "alice", { code: "sleep 2; echo ${v}", session_id: "s4" });
        await sleep(300);
        // Alice 4, bob 0: her least recently used idle session (s1) gives way.
        const bob = await run(api, "bob", { code: "echo bob", session_id: "b1" });
        expect(bob.status, JSON.stringify(bob.body)).toBe(200);
        expect(bob.body.stdout).toBe("bob\n");
        expect((await busy).body.stdout).toBe("s4\n");
        const gone = expectError(await api("/sessions/s1", { headers: as("alice") }), 410, "SESSION_EXPIRED");
        expect(gone.message).toMatch(/to make room for another caller/);
        const kept = await api<{ sessions: { session_id: string }[] }>("/sessions", { headers: as("alice") });
        expect(kept.body.sessions.map((s) => s.session_id).sort()).toEqual(["s2", "s3", "s4"]);

        // Alice 3, bob 1: alice asking for more gets nothing from bob; the retry time is when a session can expire.
        const refused = await run(api, "alice", { code: "true", session_id: "s5" });
        const error = expectError(refused, 429, "TOO_MANY_SESSIONS");
        expect(error.message).toMatch(/maximum of 4 live sessions/);
        const retry = Number(refused.headers.get("retry-after"));
        expect(retry).toBeGreaterThan(250);
        expect(retry).toBeLessThanOrEqual(300);

        // Bob may take one more from alice (3 against his 1), then they are even and he is refused.
        await sleep(1200);
        expect((await run(api, "bob", { code: "true", session_id: "b2" })).status).toBe(200);
        expectError(await run(api, "bob", { code: "true", session_id: "b3" }), 429, "TOO_MANY_SESSIONS");
        const after = await api<{ sessions: unknown[] }>("/sessions", { headers: as("alice") });
        expect(after.body.sessions).toHaveLength(2);
      },
    );
  }, 90_000);
});
