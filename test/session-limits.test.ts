// Session bookkeeping that needs its own engine: the maximum count and idle expiry.

import { afterEach, expect, it } from "vitest";
import { createTestEngine, type TestEngine } from "./helpers.js";

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

it("refuses sessions beyond the maximum with TOO_MANY_SESSIONS", () => {
  t = createTestEngine({ SANDGATE_MAX_SESSIONS: "2" }, { python: 0, javascript: 0, bash: 0 });
  t.engine.createSession("a");
  t.engine.createSession("b");
  expect(() => t!.engine.createSession("c")).toThrowError(expect.objectContaining({ code: "TOO_MANY_SESSIONS" }) as Error);
  expect(t.engine.createSession("a").id).toBe("a");
});

it("expires idle sessions and removes their workspace", async () => {
  t = createTestEngine({ SANDGATE_SESSION_TTL: "0.5" }, { python: 0, javascript: 0, bash: 0 });
  const s = t.engine.createSession();
  await t.engine.execute({ language: "python", sessionId: s.id, code: "x = 1" });
  const { existsSync } = await import("node:fs");
  expect(existsSync(s.workspace)).toBe(true);
  await new Promise((r) => setTimeout(r, 1500));
  await expect(t.engine.execute({ language: "python", sessionId: s.id, code: "x" })).rejects.toMatchObject({ code: "SESSION_EXPIRED" });
  expect(existsSync(s.workspace)).toBe(false);
});
