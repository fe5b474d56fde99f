// What a call on a warm spare does not pay for: the spawn of the spare that replaces it (it waits
// until the call has its answer) and the tokenizer's load (done when the engine is created).

import { afterEach, describe, expect, it } from "vitest";
import type { Engine } from "../../src/execution/index.js";
import { forgetTokenizer, tokenizerLoaded } from "../../src/execution/tokens.js";
import type { GovernanceEvent } from "../../src/features/governance/index.js";
import type { PoolKindState } from "../../src/sandbox/index.js";
import { createTestEngine, waitFor, type TestEngine } from "../helpers.js";

const open: TestEngine[] = [];
afterEach(async () => {
  for (const fx of open.splice(0)) await fx.close();
});

/** An engine with one warm Python spare; governed (its events go to `record`) when `record` is given. */
function engineWith(record?: (event: GovernanceEvent) => Promise<void>): Engine {
  const fx = createTestEngine({}, { python: 1, javascript: 0, bash: 0 }, { governed: record !== undefined });
  open.push(fx);
  if (record) fx.app.governance.events.subscribe({ record });
  return fx.engine;
}

const poolFull = (engine: Engine): boolean => engine.poolState().python.ready === 1 && engine.poolState().python.starting === 0;

describe("the path of a call on a warm spare", () => {
  it("an engine is created with the tokenizer loaded, so its first call does not load it", () => {
    // A test worker runs file after file in one process: an earlier file's engine may have loaded it.
    forgetTokenizer();
    expect(tokenizerLoaded()).toBe(false);
    engineWith();
    expect(tokenizerLoaded()).toBe(true);
  });

  it("the spare that replaces a used one starts only once the call has its answer, not while its run is recorded", async () => {
    let seenWhileRecording: PoolKindState | undefined;
    // The execution's record is awaited by the call: hold it long enough for anything scheduled to start.
    const engine = engineWith(async (event) => {
      if (event.kind !== "execution") return;
      await new Promise((resolve) => setTimeout(resolve, 100));
      seenWhileRecording = { ...engine.poolState().python };
    });
    expect(await waitFor(() => poolFull(engine), 30_000)).toBe(true);
    const startedBefore = engine.poolState().python.started;

    const result = await engine.execute({ language: "python", code: "1 + 1" });
    expect(result.status).toBe("ok");
    const answeredState = { ...engine.poolState().python };

    // The call took the spare, and nothing was started to replace it until it had answered.
    expect(seenWhileRecording).toMatchObject({ ready: 0, starting: 0, started: startedBefore });
    expect(answeredState).toMatchObject({ ready: 0, starting: 0, started: startedBefore });
    // Then the pool fills again by itself.
    expect(await waitFor(() => poolFull(engine), 30_000)).toBe(true);
    expect(engine.poolState().python.started).toBe(startedBefore + 1);
  }, 90_000);
});
