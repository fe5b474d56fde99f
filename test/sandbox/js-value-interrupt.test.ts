// Describing a JavaScript call's value runs user code (getters): a timeout
// interrupts it like the code itself, so the session keeps its state.

import { describe, expect, it } from "vitest";
import { useTestEngine, withSession } from "../helpers.js";

const t = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

describe("a JavaScript call's value", () => {
  for (const [what, code] of <Array<[string, string]>>[
    ["a getter", "({ get x() { while (true) {} } })"],
    ["an array's getter", "const a = [1, 2];\nObject.defineProperty(a, 1, { get() { for (;;) {} } });\na"],
    ["an awaited value's getter", "await Promise.resolve({ get y() { while (true) {} } })"],
  ]) {
    it(`with ${what} that never returns is interrupted at the time limit, and the session keeps its state`, async () => {
      await withSession(t.engine, async (sessionId) => {
        await t.engine.execute({ language: "javascript", sessionId, code: "globalThis.kept = 41" });
        const slow = await t.engine.execute({ language: "javascript", sessionId, timeoutS: 1, code });
        expect(slow.status).toBe("timeout");
        expect(slow.stateReset).toBeUndefined();
        const after = await t.engine.execute({ language: "javascript", sessionId, code: "kept + 1" });
        expect(after).toMatchObject({ status: "ok", value: 42 });
        expect(after.stateReset).toBeUndefined();
      });
    });
  }

  it("that is plain still comes back as JSON, and one with a getter as text", async () => {
    const plain = await t.engine.execute({ language: "javascript", code: "({ a: [1, 2], b: 'x' })" });
    expect(plain.value).toEqual({ a: [1, 2], b: "x" });
    const getter = await t.engine.execute({ language: "javascript", code: "({ get g() { return 5 } })" });
    expect(getter.status).toBe("ok");
  });
});
