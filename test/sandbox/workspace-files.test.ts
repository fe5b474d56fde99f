// Workspace file tools: reads, writes and listings stay inside the session's workspace
// whatever sandbox code left there (symlinks out, FIFOs, odd names), through the real file helper.

import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors/index.js";
import { listWorkspaceFiles, readWorkspaceFile, resolveWorkspacePath, workspaceUsage, writeWorkspaceFile } from "../../src/execution/workspace-files.js";
import type { WorkspaceFileLimits, WorkspaceTarget } from "../../src/execution/workspace-files.js";
import { FsHelper } from "../../src/sandbox/index.js";
import { hostProcessesMatching, useTestEngine } from "../helpers.js";

const MB = 1024 * 1024;
const limits: WorkspaceFileLimits = { maxFileBytes: MB, workspaceBytes: 8 * MB, workspaceInodes: 1000 };

const t = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });
let root: string;
let ws: WorkspaceTarget;
beforeEach(() => {
  root = join(t.engine.runtime.workspacesDir, `test-${randomBytes(6).toString("hex")}`);
  mkdirSync(root, { mode: 0o700 });
  own();
  ws = { runtime: t.engine.runtime, dir: root };
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/** What the test planted as root becomes the sandbox user's, as if sandbox code had made it. */
function own(): void {
  const user = t.engine.runtime.hostUser;
  if (user) execFileSync("chown", ["-R", "-h", `${user.uid}:${user.gid}`, root]);
}

async function expectCode(fn: () => unknown, code: ErrorCode, message?: RegExp): Promise<void> {
  let caught: unknown;
  try {
    await fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected ${code}`).toMatchObject({ name: "SandgateError", code });
  if (message) expect((caught as Error).message).toMatch(message);
}

describe("paths", () => {
  it("maps relative and /workspace paths to the sandbox view", () => {
    expect(resolveWorkspacePath("./a//b.txt")).toEqual({ sandboxPath: "/workspace/a/b.txt", relative: "a/b.txt", segments: ["a", "b.txt"] });
    expect(resolveWorkspacePath("/workspace/a/b.txt").relative).toBe("a/b.txt");
    for (const p of ["", ".", "/workspace", "/workspace/"]) expect(resolveWorkspacePath(p)).toEqual({ sandboxPath: "/workspace", relative: "", segments: [] });
    expect(resolveWorkspacePath("a\\b.txt").relative).toBe("a\\b.txt");
  });

  it("rejects .., foreign absolute paths, NUL and over-long paths with PATH_INVALID naming the path", async () => {
    await expectCode(() => resolveWorkspacePath("../x"), "PATH_INVALID", /"\.\.\/x" contains a "\.\." segment.*under \/workspace/);
    await expectCode(() => resolveWorkspacePath("a/../b"), "PATH_INVALID");
    await expectCode(() => resolveWorkspacePath("/workspace/../etc/passwd"), "PATH_INVALID");
    await expectCode(() => readWorkspaceFile(ws, "/etc/passwd", "utf8", limits), "PATH_INVALID", /\/etc\/passwd" is absolute but not under \/workspace/);
    await expectCode(() => resolveWorkspacePath("/workspacex/a"), "PATH_INVALID");
    await expectCode(() => resolveWorkspacePath("a\0b"), "PATH_INVALID", /NUL/);
    await expectCode(() => resolveWorkspacePath("a/".repeat(2049)), "PATH_INVALID", /4096 bytes/);
    await expectCode(() => resolveWorkspacePath("x".repeat(256)), "PATH_INVALID", /255 bytes/);
    expect(resolveWorkspacePath("x".repeat(255)).relative).toHaveLength(255);
  });

  it("refuses a path with a lone surrogate (valid JSON, no file name) and keeps a real pair", async () => {
    await expectCode(() => writeWorkspaceFile(ws, "a\ud800b", "x", "utf8", limits), "PATH_INVALID", /lone surrogate/);
    await expectCode(() => readWorkspaceFile(ws, "\udc00", "utf8", limits), "PATH_INVALID", /lone surrogate/);
    expect((await writeWorkspaceFile(ws, "smile-\ud83d\ude00.txt", "x", "utf8", limits)).path).toBe("/workspace/smile-\u{1f600}.txt");
  });

  it("leaves no process behind when helpers are stopped while they start (bubblewrap's child waits for a parent that is gone)", async () => {
    for (let i = 0; i < 60; i++) {
      const helper = new FsHelper(t.engine.runtime, root, 0);
      const stop = new AbortController();
      const answer = helper.run({ op: "list", segments: [], limit: 1 }, { signal: stop.signal }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, i % 7));
      stop.abort();
      await answer;
      await helper.close();
    }
    // A stranded child is not a descendant of this process any more: look for it anywhere.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(hostProcessesMatching(basename(root))).toEqual([]);
  });

  it("the helper answers a request it cannot handle with a reason, no traceback, and serves the next one", async () => {
    const helper = new FsHelper(t.engine.runtime, root, 10_000);
    try {
      const bad = await helper.run({ op: "read", segments: ["a\ud800b"], maxBytes: 10 });
      expect(bad.header).toMatchObject({ ok: false, error: "failed", message: "UnicodeEncodeError" });
      expect(JSON.stringify(bad.header)).not.toMatch(/Traceback|fs_helper/);
      const next = await helper.run({ op: "list", segments: [], limit: 10 });
      expect(next.header.ok).toBe(true);
    } finally {
      await helper.close();
    }
  });

  it("refuses symlinks that lead out: to a file, to a directory, up the tree, dangling", async () => {
    symlinkSync("/etc/passwd", join(root, "leak"));
    symlinkSync("/etc", join(root, "etc"));
    symlinkSync("../..", join(root, "up"));
    symlinkSync("/proc/self/root", join(root, "proc"));
    symlinkSync("/nonexistent/secret", join(root, "dangling"));
    symlinkSync("loop", join(root, "loop"));
    own();
    await expectCode(() => readWorkspaceFile(ws, "leak", "utf8", limits), "PATH_INVALID", /resolves outside the workspace/);
    await expectCode(() => readWorkspaceFile(ws, "etc/passwd", "utf8", limits), "PATH_INVALID", /resolves outside the workspace/);
    await expectCode(() => readWorkspaceFile(ws, "etc/no-such-file", "utf8", limits), "PATH_INVALID");
    await expectCode(() => listWorkspaceFiles(ws, "up"), "PATH_INVALID");
    await expectCode(() => readWorkspaceFile(ws, "proc/etc/passwd", "utf8", limits), "PATH_INVALID");
    await expectCode(() => readWorkspaceFile(ws, "dangling", "utf8", limits), "PATH_INVALID");
    await expectCode(() => readWorkspaceFile(ws, "loop", "utf8", limits), "PATH_INVALID");
    await expectCode(() => writeWorkspaceFile(ws, "etc/evil", "x", "utf8", limits), "PATH_INVALID");
    await expectCode(() => writeWorkspaceFile(ws, "up/evil", "x", "utf8", limits), "PATH_INVALID");
    await expectCode(() => writeWorkspaceFile(ws, "leak", "x", "utf8", limits), "PATH_INVALID");
    await expectCode(() => writeWorkspaceFile(ws, "dangling", "x", "utf8", limits), "PATH_INVALID");
    await expectCode(() => writeWorkspaceFile(ws, "dangling/x", "x", "utf8", limits), "PATH_INVALID");
    expect(existsSync("/nonexistent")).toBe(false);
    expect(existsSync(join(root, "..", "evil"))).toBe(false);
  });

  it("follows symlinks that stay inside (relative, or absolute as the sandbox sees them) for reads, and never writes through a final symlink", async () => {
    mkdirSync(join(root, "d"));
    writeFileSync(join(root, "d", "real.txt"), "inside");
    symlinkSync("d/real.txt", join(root, "alias"));
    symlinkSync("d", join(root, "dlink"));
    symlinkSync("/workspace/d", join(root, "abslink"));
    own();
    expect((await readWorkspaceFile(ws, "alias", "utf8", limits)).content).toBe("inside");
    expect(await readWorkspaceFile(ws, "dlink/real.txt", "utf8", limits)).toMatchObject({ path: "/workspace/dlink/real.txt", content: "inside" });
    expect((await readWorkspaceFile(ws, "abslink/real.txt", "utf8", limits)).content).toBe("inside");
    await expectCode(() => writeWorkspaceFile(ws, "alias", "changed", "utf8", limits), "PATH_INVALID", /symlink/);
    expect(readFileSync(join(root, "d", "real.txt"), "utf8")).toBe("inside");
    expect((await writeWorkspaceFile(ws, "dlink/new.txt", "via link", "utf8", limits)).created).toBe(true);
    expect(readFileSync(join(root, "d", "new.txt"), "utf8")).toBe("via link");
  });
});

describe("read and write", () => {
  it("round-trips utf8 and binary base64, replacing files in place", async () => {
    expect(await writeWorkspaceFile(ws, "hello.txt", "héllo ✓\n", "utf8", limits)).toEqual({ path: "/workspace/hello.txt", size: 11, created: true });
    expect(await readWorkspaceFile(ws, "/workspace/hello.txt", "utf8", limits)).toEqual({ path: "/workspace/hello.txt", content: "héllo ✓\n", encoding: "utf8", size: 11 });
    const bytes = Buffer.from([0x00, 0xff, 0x10, 0x80, 0x00, 0xfe]);
    expect((await writeWorkspaceFile(ws, "bin", bytes.toString("base64"), "base64", limits)).size).toBe(6);
    expect(readFileSync(join(root, "bin")).equals(bytes)).toBe(true);
    expect(await readWorkspaceFile(ws, "bin", "base64", limits)).toMatchObject({ content: bytes.toString("base64"), size: 6 });
    expect(await writeWorkspaceFile(ws, "hello.txt", "short", "utf8", limits)).toMatchObject({ created: false, size: 5 });
    expect(readFileSync(join(root, "hello.txt"), "utf8")).toBe("short");
    expect(statSync(join(root, "hello.txt")).mode & 0o777).toBe(0o644);
    expect((await writeWorkspaceFile(ws, "empty", "", "utf8", limits)).size).toBe(0);
    expect((await readWorkspaceFile(ws, "empty", "utf8", limits)).content).toBe("");
  });

  it("creates missing parents 0755 and the file 0644, all the sandbox user's without any chown by the host", async () => {
    mkdirSync(join(root, "a"));
    own();
    const r = await writeWorkspaceFile(ws, "a/b/c/d.txt", "deep", "utf8", limits);
    expect(r).toEqual({ path: "/workspace/a/b/c/d.txt", size: 4, created: true });
    expect(readFileSync(join(root, "a/b/c/d.txt"), "utf8")).toBe("deep");
    const uid = t.engine.runtime.hostUser?.uid ?? process.getuid?.();
    for (const [path, mode] of [["a/b", 0o755], ["a/b/c", 0o755], ["a/b/c/d.txt", 0o644]] as const) {
      const st = lstatSync(join(root, path));
      expect(st.mode & 0o777, path).toBe(mode);
      expect(st.uid, path).toBe(uid);
    }
    expect((await writeWorkspaceFile(ws, "a/b/c/d.txt", "again", "utf8", limits)).created).toBe(false);
  });

  it("reads only regular files: FIFOs fail at once, directories and missing paths say so", async () => {
    execFileSync("mkfifo", [join(root, "pipe")]);
    mkdirSync(join(root, "dir"));
    writeFileSync(join(root, "f.txt"), "x");
    own();
    await expectCode(() => readWorkspaceFile(ws, "pipe", "utf8", limits), "NOT_A_FILE", /special file/);
    await expectCode(() => writeWorkspaceFile(ws, "pipe", "x", "utf8", limits), "NOT_A_FILE");
    await expectCode(() => readWorkspaceFile(ws, "dir", "utf8", limits), "NOT_A_FILE", /directory/);
    await expectCode(() => readWorkspaceFile(ws, "/workspace", "utf8", limits), "NOT_A_FILE");
    await expectCode(() => writeWorkspaceFile(ws, "dir", "x", "utf8", limits), "NOT_A_FILE");
    await expectCode(() => writeWorkspaceFile(ws, "", "x", "utf8", limits), "NOT_A_FILE");
    await expectCode(() => readWorkspaceFile(ws, "nope/x.txt", "utf8", limits), "FILE_NOT_FOUND", /\/workspace\/nope\/x\.txt/);
    await expectCode(() => readWorkspaceFile(ws, "f.txt/x", "utf8", limits), "FILE_NOT_FOUND");
    await expectCode(() => writeWorkspaceFile(ws, "f.txt/x", "y", "utf8", limits), "PATH_INVALID", /not a directory/);
  });

  it("enforces the per-file limit on reads and writes, writing nothing", async () => {
    const small = { ...limits, maxFileBytes: 100 };
    writeFileSync(join(root, "big"), Buffer.alloc(101));
    own();
    await expectCode(() => readWorkspaceFile(ws, "big", "base64", small), "FILE_TOO_LARGE");
    expect((await readWorkspaceFile(ws, "big", "base64", { ...small, maxFileBytes: 101 })).size).toBe(101);
    await expectCode(() => writeWorkspaceFile(ws, "new/out", "x".repeat(101), "utf8", small), "FILE_TOO_LARGE");
    expect(existsSync(join(root, "new"))).toBe(false);
  });

  it("enforces the workspace limit counting the file being replaced, writing nothing when over", async () => {
    const capped = { ...limits, maxFileBytes: MB, workspaceBytes: MB };
    const kb600 = Buffer.alloc(600 * 1024, 1).toString("base64");
    await writeWorkspaceFile(ws, "a", kb600, "base64", capped);
    await expectCode(() => writeWorkspaceFile(ws, "sub/b", kb600, "base64", capped), "FILE_TOO_LARGE", /workspace over its 1 MB limit/);
    expect(existsSync(join(root, "sub"))).toBe(false);
    expect((await writeWorkspaceFile(ws, "a", Buffer.alloc(900 * 1024).toString("base64"), "base64", capped)).size).toBe(900 * 1024);
  });

  it("counts files and directories against the inode limit, and directory blocks as bytes", async () => {
    for (let i = 0; i < 20; i++) mkdirSync(join(root, `d${i}`));
    own();
    await expectCode(() => writeWorkspaceFile(ws, "one-more", "x", "utf8", { ...limits, workspaceInodes: 20 }), "FILE_TOO_LARGE", /limit of 20 files and directories/);
    expect(existsSync(join(root, "one-more"))).toBe(false);
    expect(await workspaceUsage(ws, { workspaceBytes: MB, workspaceInodes: 100 })).toMatchObject({ inodes: 20, over: false });
    expect((await workspaceUsage(ws, { workspaceBytes: MB, workspaceInodes: 100 })).bytes).toBeGreaterThanOrEqual(20 * 4096);
    expect(await workspaceUsage(ws, { workspaceBytes: MB, workspaceInodes: 10 })).toMatchObject({ over: true });
    expect(await workspaceUsage(ws, { workspaceBytes: 4096, workspaceInodes: 100 })).toMatchObject({ over: true });
  });

  it("rejects invalid base64 and non-UTF-8 text read as utf8", async () => {
    for (const bad of ["abc$", "a=bc", "YQ===", "Y", "-_8="]) {
      await expectCode(() => writeWorkspaceFile(ws, "b64", bad, "base64", limits), "INVALID_INPUT", /not valid base64/);
    }
    expect(existsSync(join(root, "b64"))).toBe(false);
    expect((await writeWorkspaceFile(ws, "b64", "YW Jj\nZA", "base64", limits)).size).toBe(4); // unpadded, wrapped
    expect(readFileSync(join(root, "b64"), "utf8")).toBe("abcd");
    writeFileSync(join(root, "latin1"), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    own();
    await expectCode(() => readWorkspaceFile(ws, "latin1", "utf8", limits), "INVALID_INPUT", /encoding "base64"/);
    expect((await readWorkspaceFile(ws, "latin1", "base64", limits)).content).toBe("Y2Fm6Q==");
  });
});

describe("list", () => {
  it("lists one level sorted by name with types and sizes, without following symlinks", async () => {
    writeFileSync(join(root, "b.txt"), "12345");
    mkdirSync(join(root, "a-dir"));
    writeFileSync(join(root, "a-dir", "inner"), "x");
    symlinkSync("/etc/passwd", join(root, "c-link"));
    execFileSync("mkfifo", [join(root, "d-pipe")]);
    writeFileSync(Buffer.from(`${root}/e-\xff`, "latin1"), "odd name");
    own();
    const out = await listWorkspaceFiles(ws);
    expect(out.path).toBe("/workspace");
    expect(out.truncated).toBe(false);
    expect(out.entries.map(({ name, path, type, size }) => ({ name, path, type, size }))).toEqual([
      { name: "a-dir", path: "/workspace/a-dir", type: "directory", size: 0 },
      { name: "b.txt", path: "/workspace/b.txt", type: "file", size: 5 },
      { name: "c-link", path: "/workspace/c-link", type: "symlink", size: 0 },
      { name: "d-pipe", path: "/workspace/d-pipe", type: "other", size: 0 },
      { name: "e-\ufffd", path: "/workspace/e-\ufffd", type: "file", size: 8 },
    ]);
    expect(Math.abs(Date.parse(out.entries[1]!.modifiedAt) - statSync(join(root, "b.txt")).mtimeMs)).toBeLessThan(2);
    expect((await listWorkspaceFiles(ws, "/workspace/a-dir")).entries).toMatchObject([{ name: "inner", path: "/workspace/a-dir/inner", type: "file", size: 1 }]);
  });

  it("truncates at the limit and refuses files and missing directories", async () => {
    for (const n of ["c", "a", "d", "b"]) writeFileSync(join(root, n), n);
    own();
    expect(await listWorkspaceFiles(ws, ".", { limit: 2 })).toMatchObject({ truncated: true, entries: [{ name: "a" }, { name: "b" }] });
    expect((await listWorkspaceFiles(ws, "", { limit: 4 })).truncated).toBe(false);
    await expectCode(() => listWorkspaceFiles(ws, "a"), "NOT_A_FILE");
    await expectCode(() => listWorkspaceFiles(ws, "missing"), "FILE_NOT_FOUND");
  });
});

describe("with a real sandbox", () => {
  it("refuses what sandbox code planted: symlinks out and a FIFO; files written for the sandbox are its own", async () => {
    const s = t.engine.sessions.create();
    try {
      const code = [
        "import os",
        "os.chdir('/workspace')",
        "os.symlink('/etc/passwd', 'leak')",
        "os.symlink('/', 'rootdir')",
        "os.mkfifo('pipe')",
        "open('note.txt', 'w').write('from the sandbox')",
      ].join("\n");
      expect(await t.engine.execute({ code, language: "python", sessionId: s.id })).toMatchObject({ status: "ok" });
      await expectCode(() => t.engine.files.read(s.id, "leak"), "PATH_INVALID", /resolves outside/);
      await expectCode(() => t.engine.files.read(s.id, "rootdir/etc/passwd"), "PATH_INVALID", /resolves outside/);
      await expectCode(() => t.engine.files.read(s.id, "pipe"), "NOT_A_FILE");
      expect((await t.engine.files.read(s.id, "note.txt")).content).toBe("from the sandbox");
      const types = Object.fromEntries((await t.engine.files.list(s.id)).entries.map((e) => [e.name, e.type]));
      expect(types).toMatchObject({ leak: "symlink", rootdir: "symlink", pipe: "other", "note.txt": "file" });

      await t.engine.files.write(s.id, "in/data.txt", "from the host");
      const back = await t.engine.execute({ code: "p = '/workspace/in/data.txt'\nopen(p, 'a').write('!')\nopen(p).read()", language: "python", sessionId: s.id });
      expect(back).toMatchObject({ status: "ok", value: "from the host!" });
    } finally {
      await t.engine.sessions.stop(s.id);
    }
  });
});
