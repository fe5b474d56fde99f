// A steady load of stateless calls at the sandbox cap must not make the pool kill and restart its
// spares of other languages over and over: each restart is a whole sandbox start of CPU taken from
// the callers (seen: 26 Python starts during 3 s of Bash calls, half the server's CPU).

import { afterEach, describe, expect, it } from "vitest";
import { createTestEngine, waitFor, type TestEngine } from "../helpers.js";

let fx: TestEngine | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe("warm pool under pressure", () => {
  it("two callers of stateless Bash at the sandbox cap do not churn the Python spares, and the spares come back once the load ends", async () => {
    // 2 Python + 1 JavaScript + 1 Bash spares and 2 callers: the cap of 6 is reached while the calls run and retire.
    fx = createTestEngine({ SANDGATE_MAX_SANDBOXES: "6" }, { python: 2, javascript: 1, bash: 1 });
    const { engine } = fx;
    expect(await waitFor(() => Object.values(engine.poolState()).every((s) => s.ready >= s.target && s.starting === 0), 30_000)).toBe(true);
    const before = engine.poolState().python.started;
    const end = Date.now() + 3000;
    let calls = 0;
    await Promise.all(
      [0, 1].map(async () => {
        while (Date.now() < end) {
          const result = await engine.execute({ language: "bash", code: "echo 2" });
          expect(result.status).toBe("ok");
          calls++;
        }
      }),
    );
    const pythonStarts = engine.poolState().python.started - before;
    expect(calls).toBeGreaterThan(5);
    // Giving way costs at most the two spares once (and a refill after a quiet spell), not one start per call.
    expect(pythonStarts).toBeLessThanOrEqual(4);
    expect(await waitFor(() => engine.poolState().python.ready === 2, 15_000)).toBe(true);
  }, 60_000);
});
