// Workspace quotas that hold: a session workspace is its own ext4 filesystem (as root with loop
// devices), so writes past its bytes or inodes fail inside; without it, checks after every call.

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { createTestEngine, type TestEngine } from "../helpers.js";
import { LOCAL_OWNER } from "../../src/execution/sessions.js";

const asRoot = process.getuid?.() === 0 && existsSync("/dev/loop-control");
const MB = 1048576;
let fixtures: TestEngine[] = [];

afterEach(async () => {
  for (const f of fixtures) await f.close();
  fixtures = [];
});

function engineWith(env: Record<string, string>): TestEngine {
  const f = createTestEngine({ SANDGATE_MAX_WORKSPACE_MB: "8", ...env }, { python: 0, javascript: 0, bash: 0 });
  fixtures.push(f);
  return f;
}

function mounts(): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((l) => l.split(" ")[4] ?? "");
}

function workspaceOf(f: TestEngine, id: string): { dir: string; image: string } {
  const dir = f.engine.sessions.manager.get(LOCAL_OWNER, id).workspaceDir;
  return { dir, image: join(f.engine.runtime.workspacesDir, ".images", `${dir.split("/").pop()!}.img`) };
}

const FILL = (path: string, mb: number, then = "") => `
import errno
err = None
try:
    with open(${JSON.stringify(path)}, "wb") as f:
        for _ in range(${mb}):
            f.write(b"x" * 1048576)
            f.flush()
except OSError as e:
    err = e.errno
print("errno", err)
${then}
`;

it.runIf(asRoot)("a session that writes past its workspace size gets ENOSPC inside and the host keeps no more than the limit", async () => {
  const f = engineWith({});
  f.engine.sessions.create("big");
  const result = await f.engine.execute({ sessionId: "big", language: "python", code: FILL("/workspace/big.bin", 40) });
  expect(result.stdout).toContain("errno 28");
  const { image, dir } = workspaceOf(f, "big");
  expect(statSync(image).blocks * 512).toBeLessThanOrEqual(10 * MB);
  expect(mounts()).toContain(dir);
  expect(await f.engine.sessions.filesystems.state()).toEqual({ active: "filesystem" });
});

it.runIf(asRoot)("a session cannot create more files and directories than its inode limit (ENOSPC)", async () => {
  const f = engineWith({ SANDGATE_MAX_WORKSPACE_INODES: "100" });
  f.engine.sessions.create("many");
  const code = `
import os
made, err = 0, None
try:
    for i in range(5000):
        os.mkdir(f"/workspace/d{i}") if i % 2 else open(f"/workspace/f{i}", "w").close()
        made += 1
except OSError as e:
    err = e.errno
print("made", made, "errno", err)
`;
  const result = await f.engine.execute({ sessionId: "many", language: "python", code });
  const made = Number(/made (\d+)/.exec(result.stdout)?.[1]);
  expect(result.stdout).toContain("errno 28");
  // ext4 rounds the inode count up to whole inode-table blocks (16 inodes each).
  expect(made).toBeLessThanOrEqual(100 + 16);
  expect(made).toBeGreaterThan(50);
});

it.runIf(asRoot)("a call that fails after writing leaves no more than the workspace limit", async () => {
  const f = engineWith({});
  f.engine.sessions.create("fail");
  const result = await f.engine.execute({ sessionId: "fail", language: "python", code: FILL("/workspace/a.bin", 40, "raise SystemExit(3)") });
  expect(result.status).not.toBe("ok");
  expect(statSync(workspaceOf(f, "fail").image).blocks * 512).toBeLessThanOrEqual(10 * MB);
});

it.runIf(asRoot)("stopping a session unmounts its filesystem and deletes its image; close() leaves no mount", async () => {
  const f = engineWith({});
  f.engine.sessions.create("a");
  f.engine.sessions.create("b");
  await f.engine.execute({ sessionId: "a", language: "python", code: "open('/workspace/x', 'w').write('hi')" });
  await f.engine.execute({ sessionId: "b", language: "bash", code: "echo hi > /workspace/y" });
  const a = workspaceOf(f, "a");
  const b = workspaceOf(f, "b");
  expect(await f.engine.files.read("a", "x")).toMatchObject({ content: "hi" });
  expect(mounts()).toContain(a.dir);
  await f.engine.sessions.stop("a");
  expect(mounts()).not.toContain(a.dir);
  expect(existsSync(a.image)).toBe(false);
  expect(mounts()).toContain(b.dir);
  await f.engine.close();
  expect(mounts().filter((m) => m.startsWith(f.dir))).toEqual([]);
  expect(existsSync(b.image)).toBe(false);
});

it.runIf(asRoot)("filesystems left mounted by a crashed sandgate are unmounted and their images deleted at start-up", async () => {
  const first = engineWith({});
  first.engine.sessions.create("left");
  await first.engine.execute({ sessionId: "left", language: "python", code: "open('/workspace/x', 'w').write('hi')" });
  const left = workspaceOf(first, "left");
  // The first engine "crashed": its owner mark names a process that is gone.
  writeFileSync(join(first.engine.runtime.workspacesDir, ".owners", left.dir.split("/").pop()!), "4194303");
  // And a mount made by hand, with no owner mark at all.
  const byHand = join(first.engine.runtime.workspacesDir, "byhand-0123456789ab");
  const byHandImage = join(first.engine.runtime.workspacesDir, ".images", "byhand-0123456789ab.img");
  mkdirSync(byHand);
  writeFileSync(byHandImage, "");
  truncateSync(byHandImage, 4 * MB);
  execFileSync("mkfs.ext4", ["-q", "-F", "-m", "0", byHandImage], { env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" } });
  execFileSync("mount", ["-o", "loop", byHandImage, byHand]);
  expect(mounts()).toContain(byHand);

  const second = createTestEngine({ SANDBOX_DIR: first.dir, SANDGATE_MAX_WORKSPACE_MB: "8" }, { python: 0, javascript: 0, bash: 0 });
  try {
    await second.engine.sessions.manager.reaper.orphansSwept;
    expect(mounts()).not.toContain(left.dir);
    expect(mounts()).not.toContain(byHand);
    expect(existsSync(left.image)).toBe(false);
    expect(existsSync(byHandImage)).toBe(false);
  } finally {
    await second.engine.close();
  }
});

it("without a filesystem, a call that writes past the limit and then fails is reported as WorkspaceLimit and file_write is refused", async () => {
  const f = engineWith({ SANDGATE_WORKSPACE_FS: "directory" });
  f.engine.sessions.create("s");
  const result = await f.engine.execute({ sessionId: "s", language: "python", code: FILL("/workspace/a.bin", 12, "raise SystemExit(3)") });
  expect(result.error?.type).toBe("WorkspaceLimit");
  await expect(f.engine.files.write("s", "more.txt", "x")).rejects.toMatchObject({ code: "FILE_TOO_LARGE" });
  // Every later call says so too, until files are deleted.
  const next = await f.engine.execute({ sessionId: "s", language: "python", code: "1" });
  expect(next.error?.type).toBe("WorkspaceLimit");
  const cleaned = await f.engine.execute({ sessionId: "s", language: "python", code: "import os; os.remove('/workspace/a.bin')" });
  expect(cleaned.status).toBe("ok");
  await expect(f.engine.files.write("s", "more.txt", "x")).resolves.toBeDefined();
});

it("without a filesystem, data hidden in a directory made unreadable (chmod 000) still counts against the limit", async () => {
  const f = engineWith({ SANDGATE_WORKSPACE_FS: "directory" });
  f.engine.sessions.create("s");
  const code = `import os\nos.makedirs("/workspace/d/e")\n${FILL("/workspace/d/e/a.bin", 12)}\nos.chmod("/workspace/d/e", 0)\nos.chmod("/workspace/d", 0)`;
  const result = await f.engine.execute({ sessionId: "s", language: "python", code });
  expect(result.error?.type).toBe("WorkspaceLimit");
  await expect(f.engine.files.write("s", "more.txt", "x")).rejects.toMatchObject({ code: "FILE_TOO_LARGE" });
});
