// An interrupted JavaScript call's timers are cleared however the code reached them: the timers
// module (require or import), and timers/promises (awaited sleeps, async interval loops).

import { describe, expect, it } from "vitest";
import { useTestEngine, withSession } from "../helpers.js";

const t = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

describe("an interrupted JavaScript call", () => {
  it("stops intervals started through require('timers'), import from 'node:timers' and timers/promises, quietly, and keeps the state", async () => {
    await withSession(t.engine, async (sessionId) => {
      await t.engine.execute({ language: "javascript", sessionId, code: "globalThis.kept = 41" });
      const code = [
        "const timers = require('timers');",
        "timers.setInterval(() => console.log('tick-require'), 50);",
        "const { setInterval: esmInterval } = await import('node:timers');",
        "esmInterval(() => console.log('tick-import'), 50);",
        "const { setInterval: every } = require('node:timers/promises');",
        "(async () => { for await (const _ of every(50)) console.log('tick-promises'); })();",
        "(async () => { await require('node:timers/promises').setTimeout(100_000); console.log('slept'); })();",
        "await new Promise(() => {});",
      ].join("\n");
      const slow = await t.engine.execute({ language: "javascript", sessionId, timeoutS: 1, code });
      expect(slow.status).toBe("timeout");
      expect(slow.stdout).toContain("tick-require");
      expect(slow.stdout).toContain("tick-import");
      expect(slow.stdout).toContain("tick-promises");
      expect(slow.stderr).not.toContain("AbortError");
      const after = await t.engine.execute({ language: "javascript", sessionId, code: "await new Promise((r) => setTimeout(r, 400)); kept + 1" });
      expect(after).toMatchObject({ status: "ok", value: 42 });
      expect(after.stdout).toBe("");
      // The aborted sleep and interval reject with AbortError, which nobody needs to hear about.
      expect(after.stderr).toBe("");
      expect(after.stateReset).toBeUndefined();
    });
  });

  it("an interval and a sleep of timers/promises left running are stopped without an error in the next call", async () => {
    await withSession(t.engine, async (sessionId) => {
      const code = [
        "const { setInterval: every, setTimeout: sleep } = require('node:timers/promises');",
        "(async () => { for await (const _ of every(300)) console.log('tick'); })();",
        "(async () => { await sleep(100000); console.log('slept'); })();",
        "await new Promise(() => {});",
      ].join("\n");
      const slow = await t.engine.execute({ language: "javascript", sessionId, timeoutS: 2, code });
      expect(slow.status).toBe("timeout");
      const after = await t.engine.execute({ language: "javascript", sessionId, code: "await new Promise((r) => setTimeout(r, 300)); 5" });
      expect(after).toMatchObject({ status: "ok", value: 5, stdout: "", stderr: "" });
    });
  });

  it("timers/promises sleeps a call awaits normally still resolve with their value", async () => {
    const result = await t.engine.execute({
      language: "javascript",
      code: "const { setTimeout: sleep, setImmediate: soon } = require('timers/promises');\nconst c = new AbortController();\n[await sleep(10, 'a'), await soon('b'), await sleep(10, 'c', { signal: c.signal })]",
    });
    expect(result).toMatchObject({ status: "ok", value: ["a", "b", "c"] });
  });
});
