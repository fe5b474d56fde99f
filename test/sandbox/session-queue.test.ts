// A session with work queued or under way (a call waiting for its workspace or for an earlier
// call, a file operation) does not expire under it, however short the idle TTL.

import { afterEach, expect, it } from "vitest";
import { createTestEngine, type TestEngine } from "../helpers.js";

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

it("keeps a session alive while work it accepted is still queued or running, then expires it once idle", async () => {
  t = createTestEngine({ SANDGATE_SESSION_TTL: "0.5" }, { python: 0, javascript: 0, bash: 0 });
  const s = t.engine.sessions.create("queued");
  const session = t.engine.sessions.manager.get(s.owner, s.id);
  // Work the session accepted that is not a running call (as a call waiting for its workspace
  // to be mounted is): three idle TTLs long.
  const held = session.serialize("python", () => new Promise<void>((r) => setTimeout(r, 1500)));
  const next = t.engine.execute({ language: "python", sessionId: s.id, code: "6 * 7" });
  await held;
  const result = await next;
  expect(result.status).toBe("ok");
  expect(result.value).toBe(42);
  expect(t.engine.sessions.get(s.id).calls).toBe(1);
  await new Promise((r) => setTimeout(r, 1500));
  expect(() => t!.engine.sessions.get(s.id)).toThrowError(expect.objectContaining({ code: "SESSION_EXPIRED" }) as Error);
});
