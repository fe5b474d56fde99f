// Code that gives SIGINT back its default action is ended by the interrupt itself: the call still
// says timeout (or killed, for a cancel) and why, not that the runner died unexpectedly.

import { describe, expect, it } from "vitest";
import { useTestEngine, withSession } from "../helpers.js";

const t = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

describe("an interrupt that ends the interpreter", () => {
  it("a Python call that reset SIGINT to its default and times out says timeout and state_reset, and the session goes on", async () => {
    await withSession(t.engine, async (sessionId) => {
      await t.engine.execute({ language: "python", sessionId, code: "x = 41" });
      const slow = await t.engine.execute({ language: "python", sessionId, timeoutS: 1, code: "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_DFL)\ntime.sleep(100)" });
      expect(slow.status).toBe("timeout");
      expect(slow.error?.message).toMatch(/timed out after 1 s; the interrupt ended the interpreter .* state is lost/);
      expect(slow.stateReset).toBe(true);
      const after = await t.engine.execute({ language: "python", sessionId, code: "1 + 1" });
      expect(after).toMatchObject({ status: "ok", value: 2 });
    });
  });

  it("a cancelled Python call that reset SIGINT to its default says killed by the cancel, not an unexpected exit", async () => {
    await withSession(t.engine, async (sessionId) => {
      const controller = new AbortController();
      const cancelled = await t.engine.execute({
        language: "python",
        sessionId,
        timeoutS: 20,
        code: "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_DFL)\nprint('begun', flush=True)\ntime.sleep(100)",
        signal: controller.signal,
        onOutput: () => controller.abort(),
      });
      expect(cancelled.status).toBe("killed");
      expect(cancelled.error?.message).toMatch(/^the call was cancelled; the interrupt ended the interpreter/);
      expect(cancelled.stateReset).toBe(true);
    });
  });
});
