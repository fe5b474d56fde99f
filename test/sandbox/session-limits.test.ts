// Session bookkeeping that needs its own engine: the maximum count, idle expiry, cancellation.

import { afterEach, expect, it } from "vitest";
import { createTestEngine, type TestEngine } from "../helpers.js";

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

it("refuses sessions beyond the maximum with TOO_MANY_SESSIONS", () => {
  t = createTestEngine({ SANDGATE_MAX_SESSIONS: "2" }, { python: 0, javascript: 0, bash: 0 });
  t.engine.sessions.create("a");
  t.engine.sessions.create("b");
  expect(() => t!.engine.sessions.create("c")).toThrowError(expect.objectContaining({ code: "TOO_MANY_SESSIONS" }) as Error);
  expect(t.engine.sessions.create("a").id).toBe("a");
});

it("scopes session ids per owner, caps each owner's sessions, and hides other owners' sessions", async () => {
  t = createTestEngine({ SANDGATE_MAX_SESSIONS: "4", SANDGATE_SESSIONS_PER_CALLER: "2" }, { python: 0, javascript: 0, bash: 0 });
  const a = t.engine.sessions.create("default", "owner-a");
  const b = t.engine.sessions.create("default", "owner-b");
  expect(t.engine.sessions.manager.get("owner-a", "default").workspaceDir).not.toBe(t.engine.sessions.manager.get("owner-b", "default").workspaceDir);
  expect([a.workspace, b.workspace]).toEqual(["/workspace", "/workspace"]);
  t.engine.sessions.create("second", "owner-a");
  const over = (() => {
    try {
      t.engine.sessions.create("third", "owner-a");
    } catch (error) {
      return error as { code: string; message: string; data: { retry_after: number } };
    }
    return undefined;
  })();
  expect(over).toMatchObject({ code: "TOO_MANY_SESSIONS", message: expect.stringMatching(/stop one/) as string });
  // The caller's own ids, to carry on in one of them (the codemode profile cannot stop sessions), and no other caller's.
  expect(over?.message).toMatch(/reuse one \(session_id `(second`, `default|default`, `second)`\)/);
  expect(over?.data).toMatchObject({ sessions: expect.arrayContaining(["default", "second"]) as string[] });
  expect(over?.data.retry_after).toBeGreaterThan(0);
  expect(t.engine.sessions.list("owner-b").map((x) => x.id)).toEqual(["default"]);
  expect(() => t!.engine.sessions.get("second", "owner-b")).toThrowError(expect.objectContaining({ code: "SESSION_NOT_FOUND" }) as Error);
  await expect(t.engine.sessions.stop("second", "owner-b")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
  await t.engine.sessions.stop("second", "owner-a");
  // An ended session is "expired" to its owner and unknown to everyone else.
  expect(() => t!.engine.sessions.get("second", "owner-a")).toThrowError(expect.objectContaining({ code: "SESSION_EXPIRED" }) as Error);
  expect(() => t!.engine.sessions.get("second", "owner-b")).toThrowError(expect.objectContaining({ code: "SESSION_NOT_FOUND" }) as Error);
  await t.engine.sessions.stopOwnedBy("owner-a", "test");
  expect(t.engine.sessions.listAll().map((x) => `${x.owner}/${x.id}`)).toEqual(["owner-b/default"]);
});

it("expires idle sessions and removes their workspace", async () => {
  t = createTestEngine({ SANDGATE_SESSION_TTL: "0.5" }, { python: 0, javascript: 0, bash: 0 });
  const s = t.engine.sessions.create();
  const workspaceDir = t.engine.sessions.manager.get(s.owner, s.id).workspaceDir;
  await t.engine.execute({ language: "python", sessionId: s.id, code: "x = 1" });
  const { existsSync } = await import("node:fs");
  expect(existsSync(workspaceDir)).toBe(true);
  await new Promise((r) => setTimeout(r, 1500));
  await expect(t.engine.execute({ language: "python", sessionId: s.id, code: "x" })).rejects.toMatchObject({ code: "SESSION_EXPIRED" });
  expect(existsSync(workspaceDir)).toBe(false);
});

it("caps the workspace: a full tmpfs for stateless calls, a WorkspaceLimit error for plain-directory sessions", async () => {
  // Sessions with a filesystem of their own get ENOSPC instead (test/workspace-filesystem.test.ts).
  t = createTestEngine({ SANDGATE_MAX_WORKSPACE_MB: "32", SANDGATE_WORKSPACE_FS: "directory" }, { python: 0, javascript: 0, bash: 0 });
  const write = (mb: number, name: string) => `open('/workspace/${name}', 'wb').write(b'x' * (${mb} * 1024 * 1024))`;
  const stateless = await t.engine.execute({ language: "python", code: write(40, "big") });
  expect(stateless.status).toBe("error");
  expect(stateless.error?.message).toMatch(/No space left/);

  const s = t.engine.sessions.create();
  expect((await t.engine.execute({ language: "python", sessionId: s.id, code: write(20, "a") })).status).toBe("ok");
  const over = await t.engine.execute({ language: "python", sessionId: s.id, code: write(20, "b") });
  expect(over.status).toBe("error");
  expect(over.error?.type).toBe("WorkspaceLimit");
  expect(over.error?.message).toContain("32 MB");
  // Deleting files brings the session back under the limit.
  const cleaned = await t.engine.execute({ language: "bash", sessionId: s.id, code: "rm /workspace/a /workspace/b && echo cleaned" });
  expect(cleaned).toMatchObject({ status: "ok", stdout: "cleaned\n" });
});

it("serves a burst of stateless calls larger than the pool, each in a fresh sandbox", async () => {
  t = createTestEngine({}, { python: 1, javascript: 0, bash: 0 });
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) => t!.engine.execute({ language: "python", code: `import os\nopen('/workspace/mine', 'w').write('${i}')\nsorted(os.listdir('/workspace'))` })),
  );
  for (const r of results) expect(r).toMatchObject({ status: "ok", value: ["mine"] });
  expect(t.engine.poolState().python.started).toBeGreaterThanOrEqual(12);
});

it("a call cancelled while its session's sandbox starts leaves no dead runner behind", async () => {
  t = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
  const s = t.engine.sessions.create();
  await t.engine.execute({ language: "python", sessionId: s.id, signal: AbortSignal.abort(), code: "import time; time.sleep(30)" }).catch(() => undefined);
  // Whatever the session keeps after the cancel is a live runner, never a dead one.
  const session = t.engine.sessions.manager.get(s.owner, s.id);
  for (const kind of t.engine.sessions.get(s.id).runners) expect(session.sandbox(kind)?.alive, kind).toBe(true);
  const next = await t.engine.execute({ language: "python", sessionId: s.id, code: "6 * 7" });
  expect(next.value).toBe(42);
});
