// Drawing the images a Python call leaves (open figures, an image value) and making its value into
// text are part of the call: a timeout interrupts them like the code itself, so the session keeps its state.

import { describe, expect, it } from "vitest";
import { useTestEngine, withSession } from "../helpers.js";

const t = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

const hasMatplotlib = await (async () => {
  const { execFileSync } = await import("node:child_process");
  try {
    execFileSync("/usr/bin/python3", ["-c", "import matplotlib, PIL"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!hasMatplotlib)("images drawn at the end of a Python call", () => {
  it("thousands of open figures drawn past the time limit are interrupted, the state is kept and no figure is left for the next call", async () => {
    await withSession(t.engine, async (sessionId) => {
      await t.engine.execute({ language: "python", sessionId, code: "x = 41\nimport matplotlib.pyplot as plt" });
      const many = await t.engine.execute({
        language: "python",
        sessionId,
        timeoutS: 2,
        code: "for i in range(3000):\n    plt.figure(); plt.plot([1, 2, 3])\n'made'",
      });
      expect(many.status).toBe("timeout");
      expect(many.stateReset).toBeUndefined();
      expect(many.error?.message).toMatch(/interrupted; the interpreter and its state .* are kept/);
      const after = await t.engine.execute({ language: "python", sessionId, code: "[x + 1, len(plt.get_fignums())]" });
      expect(after).toMatchObject({ status: "ok", value: [42, 0] });
      expect(after.images ?? []).toEqual([]);
      expect(after.stateReset).toBeUndefined();
    });
  }, 60_000);

  it("an image value whose drawing outlasts the time limit is interrupted and the state is kept", async () => {
    await withSession(t.engine, async (sessionId) => {
      await t.engine.execute({ language: "python", sessionId, code: "x = 41" });
      // Sixty translucent lines of 5000 random points: drawing them takes far longer than the limit, each line a short while.
      const code = [
        "import matplotlib.pyplot as plt, numpy as np",
        "fig, ax = plt.subplots(figsize=(8, 8), dpi=100)",
        "for i in range(60):",
        "    ax.plot(np.random.rand(5000), np.random.rand(5000), alpha=0.3)",
        "fig",
      ].join("\n");
      const slow = await t.engine.execute({ language: "python", sessionId, timeoutS: 3, code });
      expect(slow.status).toBe("timeout");
      expect(slow.stateReset).toBeUndefined();
      const after = await t.engine.execute({ language: "python", sessionId, code: "x + 1" });
      expect(after).toMatchObject({ status: "ok", value: 42 });
    });
  }, 60_000);
});

describe("a Python call's value", () => {
  it("whose __repr__ never ends is interrupted at the time limit, and the session keeps its state", async () => {
    await withSession(t.engine, async (sessionId) => {
      await t.engine.execute({ language: "python", sessionId, code: "x = 41" });
      const slow = await t.engine.execute({ language: "python", sessionId, timeoutS: 1, code: "class Endless:\n    def __repr__(self):\n        while True: pass\nEndless()" });
      expect(slow.status).toBe("timeout");
      expect(slow.stateReset).toBeUndefined();
      const after = await t.engine.execute({ language: "python", sessionId, code: "x + 1" });
      expect(after).toMatchObject({ status: "ok", value: 42 });
      expect(after.stateReset).toBeUndefined();
    });
  });

  it("an error whose __str__ never returns is interrupted at the time limit, and the session keeps its state", async () => {
    await withSession(t.engine, async (sessionId) => {
      await t.engine.execute({ language: "python", sessionId, code: "x = 41" });
      const code = "class Endless(Exception):\n    def __str__(self):\n        while True: pass\nraise Endless()";
      const slow = await t.engine.execute({ language: "python", sessionId, timeoutS: 1, code });
      expect(slow.status).toBe("timeout");
      expect(slow.stateReset).toBeUndefined();
      const after = await t.engine.execute({ language: "python", sessionId, code: "x + 1" });
      expect(after).toMatchObject({ status: "ok", value: 42 });
    });
  });

  it("of a call that caught its interrupt and went on still comes back", async () => {
    await withSession(t.engine, async (sessionId) => {
      const result = await t.engine.execute({
        language: "python",
        sessionId,
        timeoutS: 1,
        code: "import time\ntry:\n    time.sleep(100)\nexcept KeyboardInterrupt:\n    pass\n'caught'",
      });
      expect(result.status).toBe("timeout");
      expect(result.value).toBe("caught");
    });
  });
});
