// Workspace file tools: reads, writes and listings stay inside the session's workspace
// whatever sandbox code left there (symlinks out, FIFOs, odd names), on real directories.

import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ErrorCode } from "../src/errors/index.js";
import { listWorkspaceFiles, readWorkspaceFile, resolveWorkspacePath, writeWorkspaceFile } from "../src/execution/workspace-files.js";
import type { WorkspaceFileLimits } from "../src/execution/workspace-files.js";
import { createTestEngine } from "./helpers.js";

const MB = 1024 * 1024;
const limits: WorkspaceFileLimits = { maxFileBytes: MB, workspaceBytes: 8 * MB };

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "sandgate-ws-"));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function expectCode(fn: () => unknown, code: ErrorCode, message?: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected ${code}`).toMatchObject({ name: "SandgateError", code });
  if (message) expect((caught as Error).message).toMatch(message);
}

describe("paths", () => {
  it("maps relative and /workspace paths to the host and the sandbox view", () => {
    expect(resolveWorkspacePath(root, "./a//b.txt")).toEqual({ hostPath: join(root, "a/b.txt"), sandboxPath: "/workspace/a/b.txt", relative: "a/b.txt" });
    expect(resolveWorkspacePath(root, "/workspace/a/b.txt").relative).toBe("a/b.txt");
    for (const p of ["", ".", "/workspace", "/workspace/"]) expect(resolveWorkspacePath(root, p)).toEqual({ hostPath: root, sandboxPath: "/workspace", relative: "" });
    expect(resolveWorkspacePath(root, "a\\b.txt").relative).toBe("a\\b.txt");
  });

  it("rejects .., foreign absolute paths, NUL and over-long paths with PATH_INVALID naming the path", () => {
    expectCode(() => resolveWorkspacePath(root, "../x"), "PATH_INVALID", /"\.\.\/x" contains a "\.\." segment.*under \/workspace/);
    expectCode(() => resolveWorkspacePath(root, "a/../b"), "PATH_INVALID");
    expectCode(() => resolveWorkspacePath(root, "/workspace/../etc/passwd"), "PATH_INVALID");
    expectCode(() => readWorkspaceFile(root, "/etc/passwd", "utf8", limits), "PATH_INVALID", /\/etc\/passwd" is absolute but not under \/workspace/);
    expectCode(() => resolveWorkspacePath(root, "/workspacex/a"), "PATH_INVALID");
    expectCode(() => resolveWorkspacePath(root, "a\0b"), "PATH_INVALID", /NUL/);
    expectCode(() => resolveWorkspacePath(root, "a/".repeat(2049)), "PATH_INVALID", /4096 bytes/);
    expectCode(() => resolveWorkspacePath(root, "x".repeat(256)), "PATH_INVALID", /255 bytes/);
    expect(resolveWorkspacePath(root, "x".repeat(255)).relative).toHaveLength(255);
  });

  it("refuses symlinks that lead out: to a file, to a directory, up the tree, dangling", () => {
    symlinkSync("/etc/passwd", join(root, "leak"));
    symlinkSync("/etc", join(root, "etc"));
    symlinkSync("../..", join(root, "up"));
    symlinkSync("/proc/self/root", join(root, "proc"));
    symlinkSync("/nonexistent/secret", join(root, "dangling"));
    expectCode(() => readWorkspaceFile(root, "leak", "utf8", limits), "PATH_INVALID", /resolves outside the workspace/);
    expectCode(() => readWorkspaceFile(root, "etc/passwd", "utf8", limits), "PATH_INVALID", /resolves outside the workspace/);
    expectCode(() => readWorkspaceFile(root, "etc/no-such-file", "utf8", limits), "PATH_INVALID");
    expectCode(() => listWorkspaceFiles(root, "up"), "PATH_INVALID");
    expectCode(() => readWorkspaceFile(root, "proc/etc/passwd", "utf8", limits), "PATH_INVALID");
    expectCode(() => readWorkspaceFile(root, "dangling", "utf8", limits), "PATH_INVALID");
    expectCode(() => writeWorkspaceFile(root, "etc/evil", "x", "utf8", limits), "PATH_INVALID");
    expectCode(() => writeWorkspaceFile(root, "up/evil", "x", "utf8", limits), "PATH_INVALID");
    expectCode(() => writeWorkspaceFile(root, "leak", "x", "utf8", limits), "PATH_INVALID");
    expectCode(() => writeWorkspaceFile(root, "dangling", "x", "utf8", limits), "PATH_INVALID");
    expect(existsSync("/nonexistent")).toBe(false);
    expect(existsSync(join(root, "..", "evil"))).toBe(false);
  });

  it("follows symlinks that stay inside for reads, and never writes through a final symlink", () => {
    mkdirSync(join(root, "d"));
    writeFileSync(join(root, "d", "real.txt"), "inside");
    symlinkSync("d/real.txt", join(root, "alias"));
    symlinkSync(join(root, "d"), join(root, "dlink"));
    expect(readWorkspaceFile(root, "alias", "utf8", limits).content).toBe("inside");
    expect(readWorkspaceFile(root, "dlink/real.txt", "utf8", limits)).toMatchObject({ path: "/workspace/dlink/real.txt", content: "inside" });
    expectCode(() => writeWorkspaceFile(root, "alias", "changed", "utf8", limits), "PATH_INVALID", /symlink/);
    expect(readFileSync(join(root, "d", "real.txt"), "utf8")).toBe("inside");
    expect(writeWorkspaceFile(root, "dlink/new.txt", "via link", "utf8", limits).created).toBe(true);
    expect(readFileSync(join(root, "d", "new.txt"), "utf8")).toBe("via link");
  });
});

describe("read and write", () => {
  it("round-trips utf8 and binary base64, replacing files in place", () => {
    expect(writeWorkspaceFile(root, "hello.txt", "héllo ✓\n", "utf8", limits)).toEqual({ path: "/workspace/hello.txt", size: 11, created: true });
    expect(readWorkspaceFile(root, "/workspace/hello.txt", "utf8", limits)).toEqual({ path: "/workspace/hello.txt", content: "héllo ✓\n", encoding: "utf8", size: 11 });
    const bytes = Buffer.from([0x00, 0xff, 0x10, 0x80, 0x00, 0xfe]);
    expect(writeWorkspaceFile(root, "bin", bytes.toString("base64"), "base64", limits).size).toBe(6);
    expect(readFileSync(join(root, "bin")).equals(bytes)).toBe(true);
    expect(readWorkspaceFile(root, "bin", "base64", limits)).toMatchObject({ content: bytes.toString("base64"), size: 6 });
    expect(writeWorkspaceFile(root, "hello.txt", "short", "utf8", limits)).toMatchObject({ created: false, size: 5 });
    expect(readFileSync(join(root, "hello.txt"), "utf8")).toBe("short");
    expect(statSync(join(root, "hello.txt")).mode & 0o777).toBe(0o644);
    expect(writeWorkspaceFile(root, "empty", "", "utf8", limits).size).toBe(0);
    expect(readWorkspaceFile(root, "empty", "utf8", limits).content).toBe("");
  });

  it("creates missing parents and hands each created path to the sandbox, parents first", () => {
    mkdirSync(join(root, "a"));
    const given: string[] = [];
    const r = writeWorkspaceFile(root, "a/b/c/d.txt", "deep", "utf8", limits, (p) => given.push(p));
    expect(r).toEqual({ path: "/workspace/a/b/c/d.txt", size: 4, created: true });
    const real = realpathSync(root);
    expect(given).toEqual([join(real, "a/b"), join(real, "a/b/c"), join(real, "a/b/c/d.txt")]);
    expect(readFileSync(join(root, "a/b/c/d.txt"), "utf8")).toBe("deep");
    expect(statSync(join(root, "a/b")).mode & 0o777).toBe(0o755);
    expect(writeWorkspaceFile(root, "a/b/c/d.txt", "again", "utf8", limits, (p) => given.push(p)).created).toBe(false);
    expect(given).toHaveLength(3);
  });

  it("reads only regular files: FIFOs fail at once, directories and missing paths say so", () => {
    execFileSync("mkfifo", [join(root, "pipe")]);
    mkdirSync(join(root, "dir"));
    expectCode(() => readWorkspaceFile(root, "pipe", "utf8", limits), "NOT_A_FILE", /special file/);
    expectCode(() => writeWorkspaceFile(root, "pipe", "x", "utf8", limits), "NOT_A_FILE");
    expectCode(() => readWorkspaceFile(root, "dir", "utf8", limits), "NOT_A_FILE", /directory/);
    expectCode(() => readWorkspaceFile(root, "/workspace", "utf8", limits), "NOT_A_FILE");
    expectCode(() => writeWorkspaceFile(root, "dir", "x", "utf8", limits), "NOT_A_FILE");
    expectCode(() => writeWorkspaceFile(root, "", "x", "utf8", limits), "NOT_A_FILE");
    expectCode(() => readWorkspaceFile(root, "nope/x.txt", "utf8", limits), "FILE_NOT_FOUND", /\/workspace\/nope\/x\.txt/);
    writeFileSync(join(root, "f.txt"), "x");
    expectCode(() => readWorkspaceFile(root, "f.txt/x", "utf8", limits), "FILE_NOT_FOUND");
    expectCode(() => writeWorkspaceFile(root, "f.txt/x", "y", "utf8", limits), "PATH_INVALID", /not a directory/);
  });

  it("enforces the per-file limit on reads and writes, writing nothing", () => {
    const small = { ...limits, maxFileBytes: 100 };
    writeFileSync(join(root, "big"), Buffer.alloc(101));
    expectCode(() => readWorkspaceFile(root, "big", "base64", small), "FILE_TOO_LARGE");
    expect(readWorkspaceFile(root, "big", "base64", { ...small, maxFileBytes: 101 }).size).toBe(101);
    expectCode(() => writeWorkspaceFile(root, "new/out", "x".repeat(101), "utf8", small), "FILE_TOO_LARGE");
    expect(existsSync(join(root, "new"))).toBe(false);
  });

  it("enforces the workspace limit counting the file being replaced, writing nothing when over", () => {
    const capped = { maxFileBytes: MB, workspaceBytes: MB };
    const kb600 = Buffer.alloc(600 * 1024, 1).toString("base64");
    writeWorkspaceFile(root, "a", kb600, "base64", capped);
    expectCode(() => writeWorkspaceFile(root, "sub/b", kb600, "base64", capped), "FILE_TOO_LARGE", /workspace over its 1 MB limit/);
    expect(existsSync(join(root, "sub"))).toBe(false);
    expect(writeWorkspaceFile(root, "a", Buffer.alloc(900 * 1024).toString("base64"), "base64", capped).size).toBe(900 * 1024);
  });

  it("rejects invalid base64 and non-UTF-8 text read as utf8", () => {
    for (const bad of ["abc$", "a=bc", "YQ===", "Y", "-_8="]) {
      expectCode(() => writeWorkspaceFile(root, "b64", bad, "base64", limits), "INVALID_INPUT", /not valid base64/);
    }
    expect(existsSync(join(root, "b64"))).toBe(false);
    expect(writeWorkspaceFile(root, "b64", "YW Jj\nZA", "base64", limits).size).toBe(4); // unpadded, wrapped
    expect(readFileSync(join(root, "b64"), "utf8")).toBe("abcd");
    writeFileSync(join(root, "latin1"), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    expectCode(() => readWorkspaceFile(root, "latin1", "utf8", limits), "INVALID_INPUT", /encoding "base64"/);
    expect(readWorkspaceFile(root, "latin1", "base64", limits).content).toBe("Y2Fm6Q==");
  });
});

describe("list", () => {
  it("lists one level sorted by name with types and sizes, without following symlinks", () => {
    writeFileSync(join(root, "b.txt"), "12345");
    mkdirSync(join(root, "a-dir"));
    writeFileSync(join(root, "a-dir", "inner"), "x");
    symlinkSync("/etc/passwd", join(root, "c-link"));
    execFileSync("mkfifo", [join(root, "d-pipe")]);
    writeFileSync(Buffer.from(`${root}/e-\xff`, "latin1"), "odd name");
    const out = listWorkspaceFiles(root);
    expect(out.path).toBe("/workspace");
    expect(out.truncated).toBe(false);
    expect(out.entries.map(({ name, path, type, size }) => ({ name, path, type, size }))).toEqual([
      { name: "a-dir", path: "/workspace/a-dir", type: "directory", size: 0 },
      { name: "b.txt", path: "/workspace/b.txt", type: "file", size: 5 },
      { name: "c-link", path: "/workspace/c-link", type: "symlink", size: 0 },
      { name: "d-pipe", path: "/workspace/d-pipe", type: "other", size: 0 },
      { name: "e-\ufffd", path: "/workspace/e-\ufffd", type: "file", size: 8 },
    ]);
    expect(Number.isNaN(Date.parse(out.entries[0]!.modifiedAt))).toBe(false);
    expect(listWorkspaceFiles(root, "/workspace/a-dir").entries).toMatchObject([{ name: "inner", path: "/workspace/a-dir/inner", type: "file", size: 1 }]);
  });

  it("truncates at the limit and refuses files and missing directories", () => {
    for (const n of ["c", "a", "d", "b"]) writeFileSync(join(root, n), n);
    expect(listWorkspaceFiles(root, ".", { limit: 2 })).toMatchObject({ truncated: true, entries: [{ name: "a" }, { name: "b" }] });
    expect(listWorkspaceFiles(root, "", { limit: 4 }).truncated).toBe(false);
    expectCode(() => listWorkspaceFiles(root, "a"), "NOT_A_FILE");
    expectCode(() => listWorkspaceFiles(root, "missing"), "FILE_NOT_FOUND");
  });
});

describe("with a real sandbox", () => {
  it("refuses what sandbox code planted: symlinks out and a FIFO", async () => {
    const t = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
    try {
      const info = t.engine.createSession();
      const s = { id: info.id, workspace: t.engine.sessions.get(info.owner, info.id).workspaceDir };
      const code = [
        "import os",
        "os.chdir('/workspace')",
        "os.symlink('/etc/passwd', 'leak')",
        "os.symlink('/', 'rootdir')",
        "os.mkfifo('pipe')",
        "open('note.txt', 'w').write('from the sandbox')",
      ].join("\n");
      expect(await t.engine.execute({ code, language: "python", sessionId: s.id })).toMatchObject({ status: "ok" });
      expectCode(() => readWorkspaceFile(s.workspace, "leak", "utf8", limits), "PATH_INVALID", /resolves outside/);
      expectCode(() => readWorkspaceFile(s.workspace, "rootdir/etc/passwd", "utf8", limits), "PATH_INVALID", /resolves outside/);
      expectCode(() => readWorkspaceFile(s.workspace, "pipe", "utf8", limits), "NOT_A_FILE");
      expect(readWorkspaceFile(s.workspace, "note.txt", "utf8", limits).content).toBe("from the sandbox");
      const types = Object.fromEntries(listWorkspaceFiles(s.workspace).entries.map((e) => [e.name, e.type]));
      expect(types).toMatchObject({ leak: "symlink", rootdir: "symlink", pipe: "other", "note.txt": "file" });

      // A file the host writes and gives away is the sandbox user's to change.
      const { uid, gid } = t.config.sandboxUser;
      writeWorkspaceFile(s.workspace, "in/data.txt", "from the host", "utf8", limits, (p) => {
        if (process.getuid?.() === 0) chownSync(p, uid, gid);
      });
      const back = await t.engine.execute({ code: "p = '/workspace/in/data.txt'\nopen(p, 'a').write('!')\nopen(p).read()", language: "python", sessionId: s.id });
      expect(back).toMatchObject({ status: "ok", value: "from the host!" });
    } finally {
      await t.close();
    }
  });
});
