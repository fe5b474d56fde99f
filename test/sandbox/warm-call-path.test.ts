// What a call on a warm spare does not pay for: the spawn of the spare that replaces it (it waits
// until the call has its answer) and the tokenizer's load (done when the engine is created).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { Engine } from "../../src/execution/index.js";
import { tokenizerLoaded } from "../../src/execution/tokens.js";
import { Governance, type GovernanceEvent } from "../../src/governance/index.js";
import type { PoolKindState } from "../../src/sandbox/index.js";
import { waitFor } from "../helpers.js";

const open: Array<{ engine: Engine; dir: string }> = [];
afterEach(async () => {
  for (const { engine, dir } of open.splice(0)) {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

function engineWith(governance?: (config: ReturnType<typeof loadConfig>) => Governance): Engine {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-warm-path-"));
  const config = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" });
  const engine = Engine.create(config, { pool: { python: 1, javascript: 0, bash: 0 }, ...(governance ? { governance: governance(config) } : {}) });
  open.push({ engine, dir });
  return engine;
}

const poolFull = (engine: Engine): boolean => engine.poolState().python.ready === 1 && engine.poolState().python.starting === 0;

describe("the path of a call on a warm spare", () => {
  // First in this file: the tokenizer is loaded once per process.
  it("an engine is created with the tokenizer loaded, so its first call does not load it", () => {
    expect(tokenizerLoaded()).toBe(false);
    engineWith();
    expect(tokenizerLoaded()).toBe(true);
  });

  it("the spare that replaces a used one starts only once the call has its answer, not while its run is recorded", async () => {
    let seenWhileRecording: PoolKindState | undefined;
    const engine = engineWith((config) => {
      const governance = new Governance({ config });
      governance.events.subscribe({
        // The execution's record is awaited by the call: hold it long enough for anything scheduled to start.
        record: async (event: GovernanceEvent) => {
          if (event.kind !== "execution") return;
          await new Promise((resolve) => setTimeout(resolve, 100));
          seenWhileRecording = { ...engine.poolState().python };
        },
      });
      return governance;
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
