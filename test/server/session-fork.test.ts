// sessions.fork, declared once and reached over REST and MCP: a new session holds a copy of the
// workspace (links as links, FIFOs made and never opened, unreadable entries skipped) and the
// variables, the original is untouched, and a fork that cannot be made leaves no session behind.

import { describe, expect, it } from "vitest";
import { isSandgateError } from "../../src/errors/index.js";
import { callTool, connectMcp } from "../fixtures/mcp-client.js";
import { expectError, useTestServer } from "../server-helpers.js";

interface Forked {
  session_id: string;
  forked_from: string;
  shared: boolean;
  env_names: string[];
  copied: { files: number; directories: number; links: number; fifos: number; skipped: number; bytes: number };
}

interface Run {
  status: string;
  stdout: string;
}

const t = useTestServer({ env: { SANDGATE_MAX_WORKSPACE_INODES: "64" }, server: { toolProfile: "full" } });

async function run(session_id: string, code: string): Promise<Run> {
  const reply = await t.api<Run>("/execute", { method: "POST", json: { language: "python", code, session_id } });
  expect(reply.status).toBe(200);
  return reply.body;
}

const SETUP = `
import os
os.makedirs("data/deep", exist_ok=True)
open("data/deep/table.csv", "w").write("a,b\\n1,2\\n")
open("notes.txt", "w").write("original")
os.symlink("/etc/shadow", "shadow-link")
os.symlink("../notes.txt", "data/notes-link")
os.mkfifo("pipe")
open("secret-to-self", "w").write("x")
os.chmod("secret-to-self", 0)
os.makedirs("readonly-dir")
open("readonly-dir/inside.txt", "w").write("kept")
os.chmod("readonly-dir", 0o555)
print("ready")
`;

describe("POST /sessions/{id}/fork", () => {
  it("copies files, links as links and FIFOs as FIFOs into a new session, skips what the sandbox user cannot read, and carries the variables", async () => {
    const created = await t.api("/sessions", { method: "POST", json: { session_id: "fork-src", env: { GREETING: "hello" } } });
    expect(created.status).toBe(201);
    expect((await run("fork-src", SETUP)).stdout).toContain("ready");

    const reply = await t.api<Forked>("/sessions/fork-src/fork", { method: "POST", json: { new_session_id: "fork-copy" } });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ session_id: "fork-copy", forked_from: "fork-src", shared: false, env_names: ["GREETING"] });
    expect(reply.body.copied).toMatchObject({ links: 2, fifos: 1, skipped: 1 });
    expect(reply.body.copied.files).toBe(3);
    expect(reply.body.copied.directories).toBe(3);

    const seen = await run(
      "fork-copy",
      `
import os, stat
print(open("data/deep/table.csv").read().splitlines()[1])
print(os.readlink("shadow-link"), os.readlink("data/notes-link"), open("data/notes-link").read())
print(stat.S_ISFIFO(os.lstat("pipe").st_mode))
print(os.path.exists("secret-to-self"))
print(oct(os.stat("readonly-dir").st_mode & 0o777), open("readonly-dir/inside.txt").read())
print(os.environ["GREETING"])
`,
    );
    expect(seen.status).toBe("ok");
    expect(seen.stdout.split("\n")).toEqual(["1,2", "/etc/shadow ../notes.txt original", "True", "False", "0o555 kept", "hello", ""]);
  });

  it("leaves the original untouched when the fork changes, and the fork's interpreter starts fresh", async () => {
    await run("fork-src", "x_in_memory = 42");
    const forked = await t.api<Forked>("/sessions/fork-src/fork", { method: "POST", json: {} });
    expect(forked.status).toBe(201);
    expect(forked.body.shared).toBe(true);
    const id = forked.body.session_id;
    expect(id).not.toBe("fork-src");
    const inFork = await run(id, 'open("notes.txt", "w").write("changed in the fork")\nprint("x_in_memory" in globals())');
    expect(inFork.stdout).toBe("False\n");
    expect((await run("fork-src", 'print(open("notes.txt").read(), x_in_memory)')).stdout).toBe("original 42\n");
  });

  it("refuses a new id that a live session has, an unknown source and a bad id, and starts no session for them", async () => {
    const before = t.fx.engine.sessions.count;
    expectError(await t.api("/sessions/fork-src/fork", { method: "POST", json: { new_session_id: "fork-copy" } }), 400, "INVALID_INPUT");
    expectError(await t.api("/sessions/no-such-session/fork", { method: "POST", json: {} }), 404, "SESSION_NOT_FOUND");
    expectError(await t.api("/sessions/fork-src/fork", { method: "POST", json: { new_session_id: "../escape" } }), 400, "INVALID_INPUT");
    expectError(await t.api("/sessions/fork-src/fork", { method: "POST", json: { unknown: 1 } }), 400, "INVALID_INPUT");
    expect(t.fx.engine.sessions.count).toBe(before);
  });

  it("refuses a workspace over a new session's limits with WORKSPACE_FULL and leaves no half-made session", async () => {
    await t.api("/sessions", { method: "POST", json: { session_id: "fork-big" } });
    // Code may pass the inode limit inside a call; the check after it marks the session, and a fork must not copy it.
    await run("fork-big", 'import os\nos.makedirs("many")\nfor i in range(100): open(f"many/{i}", "w").close()');
    const before = t.fx.engine.sessions.count;
    const error = expectError(await t.api("/sessions/fork-big/fork", { method: "POST", json: { new_session_id: "fork-big-copy" } }), 413, "WORKSPACE_FULL");
    expect(error.message).toMatch(/64 files and directories/);
    expect(t.fx.engine.sessions.count).toBe(before);
    expect(() => t.fx.engine.sessions.get("fork-big-copy")).toThrow();
  });

  it("does not fork another caller's session by its name", async () => {
    await expect(t.fx.engine.sessions.fork("fork-src", "key:someone-else")).rejects.toSatisfy((e) => isSandgateError(e) && e.code === "SESSION_NOT_FOUND");
  });
});

describe("fork_session over MCP", () => {
  it("is listed with hints from the operation's effects and returns the same result as REST", async () => {
    const { client } = await connectMcp(t.server.url);
    try {
      const { tools } = await client.listTools();
      const tool = tools.find((x) => x.name === "fork_session");
      expect(tool?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, openWorldHint: false });
      expect(tool?.inputSchema.required).toEqual(["session_id"]);
      const result = await callTool(client, "fork_session", { session_id: "fork-src", new_session_id: "fork-mcp" });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ session_id: "fork-mcp", forked_from: "fork-src" });
      const text = (result.content[0] as { text: string }).text;
      expect(text).toMatch(/^Session fork-mcp is a fork of fork-src: \d+ files/);
      const refused = await callTool(client, "fork_session", { session_id: "nope" });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain("SESSION_NOT_FOUND");
    } finally {
      await client.close();
    }
  });
});
