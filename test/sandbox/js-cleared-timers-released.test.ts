// A JavaScript call's timers are tracked so an interrupt can clear them; a timer the code clears
// itself is forgotten at once, so a long call that sets and clears timers (a debounce) holds no more memory.

import { describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

const t = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

describe("a JavaScript call that sets and clears timers", () => {
  it("does not keep the timers it cleared: millions of them fit in a small memory limit", async () => {
    const code = [
      "for (let i = 0; i < 2_000_000; i++) {",
      "  clearTimeout(setTimeout(() => {}, 60_000));",
      "  clearInterval(setInterval(() => {}, 60_000));",
      "  clearImmediate(setImmediate(() => {}));",
      "}",
      "'done'",
    ].join("\n");
    const result = await t.engine.execute({ language: "javascript", code, memoryMb: 128, timeoutS: 20 });
    expect(result).toMatchObject({ status: "ok", value: "done" });
  });
});
