// The engine's capability objects against real sandboxes: engine.sessions reports what calls did
// to a session, engine.files works on the same workspace code sees, and both honour owners.

import { describe, expect, it } from "vitest";
import { useTestEngine, waitFor } from "../helpers.js";

const t = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

describe("engine.sessions", () => {
  it("reports a session's calls, runners and last use as calls run in it", async () => {
    const s = t.engine.sessions.create("counted");
    try {
      expect(s).toMatchObject({ id: "counted", owner: "local", calls: 0, runners: [], busy: false, workspace: "/workspace" });
      expect((await t.engine.execute({ language: "python", sessionId: s.id, code: "x = 1" })).status).toBe("ok");
      expect((await t.engine.execute({ language: "bash", sessionId: s.id, code: "echo hi" })).stdout).toBe("hi\n");
      const after = t.engine.sessions.get(s.id);
      expect(after).toMatchObject({ calls: 2, runners: ["python", "bash"], busy: false });
      expect(Date.parse(after.lastUsedAt)).toBeGreaterThanOrEqual(Date.parse(s.lastUsedAt));
      expect(Date.parse(after.expiresAt)).toBeGreaterThan(Date.parse(after.lastUsedAt));
    } finally {
      await t.engine.sessions.stop(s.id);
    }
  });

  it("says whether ensure() started the session and why an earlier one with its id ended", async () => {
    const first = t.engine.sessions.ensure("again", "owner-e");
    expect(first.created).toBe(true);
    expect(first.endedBefore).toBeUndefined();
    expect(t.engine.sessions.ensure("again", "owner-e")).toMatchObject({ created: false, info: { id: "again" } });
    await t.engine.sessions.stopOwnedBy("owner-e", "its caller left");
    expect(() => t.engine.sessions.get("again", "owner-e")).toThrowError(expect.objectContaining({ code: "SESSION_EXPIRED" }) as Error);
    const second = t.engine.sessions.ensure("again", "owner-e");
    expect(second).toMatchObject({ created: true, endedBefore: "its caller left" });
    await t.engine.sessions.stop("again", "owner-e");
  });

  it("marks a session busy while its call runs", async () => {
    const s = t.engine.sessions.create("busy-one");
    try {
      const running = t.engine.execute({ language: "python", sessionId: s.id, code: "import time\ntime.sleep(1.5)" });
      expect(await waitFor(() => t.engine.sessions.get(s.id).busy)).toBe(true);
      expect((await running).status).toBe("ok");
      expect(t.engine.sessions.get(s.id).busy).toBe(false);
    } finally {
      await t.engine.sessions.stop(s.id);
    }
  });
});

describe("engine.files", () => {
  it("reads what code wrote, lists it, and writes what code then reads", async () => {
    const s = t.engine.sessions.create("files");
    try {
      await t.engine.execute({ language: "python", sessionId: s.id, code: "open('/workspace/from-code.txt', 'w').write('made inside')" });
      expect(await t.engine.files.read(s.id, "from-code.txt")).toEqual({ path: "/workspace/from-code.txt", content: "made inside", encoding: "utf8", size: 11 });
      expect(await t.engine.files.write(s.id, "in/from-host.txt", "made outside")).toEqual({ path: "/workspace/in/from-host.txt", size: 12, created: true });
      const listing = await t.engine.files.list(s.id);
      expect(listing.entries.map((e) => [e.name, e.type])).toEqual([
        ["from-code.txt", "file"],
        ["in", "directory"],
      ]);
      const read = await t.engine.execute({ language: "python", sessionId: s.id, code: "open('/workspace/in/from-host.txt').read()" });
      expect(read.value).toBe("made outside");
      expect(t.engine.sessions.get(s.id).calls).toBe(2);
    } finally {
      await t.engine.sessions.stop(s.id);
    }
  });

  it("never reaches another owner's session, and answers SESSION_EXPIRED once the session is stopped", async () => {
    const s = t.engine.sessions.create("private", "owner-a");
    await t.engine.files.write(s.id, "secret.txt", "a's", "utf8", "owner-a");
    await expect(t.engine.files.read(s.id, "secret.txt", "utf8", "owner-b")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(t.engine.files.write(s.id, "x.txt", "b's", "utf8", "owner-b")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(t.engine.files.list(s.id, undefined, "owner-b")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    // The refused write left nothing in the owner's workspace.
    expect((await t.engine.files.list(s.id, undefined, "owner-a")).entries.map((e) => e.name)).toEqual(["secret.txt"]);
    await t.engine.sessions.stop(s.id, "owner-a");
    await expect(t.engine.files.read(s.id, "secret.txt", "utf8", "owner-a")).rejects.toMatchObject({ code: "SESSION_EXPIRED" });
  });
});

describe("engine.executeCommand", () => {
  it("runs a shell line in the session's workspace without changing the session's shell, and rejects NUL bytes", async () => {
    const s = t.engine.sessions.create("commands");
    try {
      await t.engine.files.write(s.id, "sub/data.txt", "one\ntwo\n");
      const counted = await t.engine.executeCommand({ command: "cd sub && wc -l < data.txt | tr -d ' '", sessionId: s.id });
      expect(counted).toMatchObject({ status: "ok", stdout: "2\n", sessionId: "commands" });
      expect((await t.engine.executeCommand({ command: "pwd", sessionId: s.id })).stdout).toBe("/workspace\n");
      expect((await t.engine.executeCommand({ command: "cat data.txt", workingDirectory: "sub", sessionId: s.id })).stdout).toBe("one\ntwo\n");
      await expect(t.engine.executeCommand({ command: "echo \u0000", sessionId: s.id })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    } finally {
      await t.engine.sessions.stop(s.id);
    }
  });
});
