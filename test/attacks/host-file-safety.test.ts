// Attacks from inside real sandboxes on the host's file work: symlinks and FIFOs planted where
// outputs used to be saved, a parent directory swapped for a link during file calls, huge trees.

import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { WireExecutionResult } from "../../src/server/wire.js";
import { createTestEngine, useTestEngine, descendantPids, waitFor, type TestEngine } from "../helpers.js";
import { allowedStall, probeWhile, sampleLoopStall } from "../fixtures/samplers.js";
import { jsonApi, startTestServer } from "../server-helpers.js";

const SECRET_TEXT = "root only, never to be touched by a sandbox\n";
let secretDir: string;
let secretFile: string;
let dangling: string;

beforeEach(() => {
  secretDir = mkdtempSync(join(tmpdir(), "sandgate-secret-"));
  chmodSync(secretDir, 0o700);
  secretFile = join(secretDir, "secret");
  writeFileSync(secretFile, SECRET_TEXT, { mode: 0o600 });
  dangling = join(tmpdir(), `created-by-sandbox-${process.pid}-${Date.now()}`);
});
afterEach(() => {
  rmSync(secretDir, { recursive: true, force: true });
  rmSync(dangling, { recursive: true, force: true });
});

function expectSecretUntouched(): void {
  expect(readFileSync(secretFile, "utf8")).toBe(SECRET_TEXT);
  const st = statSync(secretFile);
  expect(st.uid).toBe(process.getuid?.());
  expect(st.mode & 0o777).toBe(0o600);
  expect(readdirSync(secretDir)).toEqual(["secret"]);
  expect(existsSync(dangling)).toBe(false);
}

const FLOOD = "import sys\nsys.stdout.write('o' * 200000 + 'END-OUT')\nsys.stderr.write('e' * 200000 + 'END-ERR')";

describe("saved outputs never land in the workspace", () => {
  const t = useTestEngine({}, { python: 1, javascript: 0, bash: 0 });

  it("ignores symlinks planted at the old saved-output paths and keeps full output retrievable from the host store", async () => {
    const plants = {
      files: [
        "import os",
        "os.makedirs('/workspace/.sandgate/outputs')",
        "for n in range(1, 6):",
        `    os.symlink(${JSON.stringify(secretFile)}, f'/workspace/.sandgate/outputs/{n}-stdout.txt')`,
        `    os.symlink(${JSON.stringify(dangling)}, f'/workspace/.sandgate/outputs/{n}-stderr.txt')`,
      ].join("\n"),
      sandgateDir: `import os\nos.symlink(${JSON.stringify(secretDir)}, '/workspace/.sandgate')`,
      outputsDir: `import os\nos.mkdir('/workspace/.sandgate')\nos.symlink(${JSON.stringify(dangling)}, '/workspace/.sandgate/outputs')`,
    };
    for (const [name, plant] of Object.entries(plants)) {
      const s = t.engine.sessions.create();
      try {
        expect(await t.engine.execute({ code: plant, language: "python", sessionId: s.id }), name).toMatchObject({ status: "ok" });
        const r = await t.engine.execute({ code: FLOOD, language: "python", sessionId: s.id });
        expect(r.truncated, name).toBe(true);
        expectSecretUntouched();
        expect(r.fullOutput?.stdout, name).toMatch(/^sandgate:\/\/outputs\/[A-Za-z0-9_-]{24}\/stdout$/);
        expect(r.stderr).toContain("sandgate://outputs/");
        expect(JSON.stringify(r)).not.toContain(".sandgate");
        expect(JSON.stringify(r)).not.toContain(t.dir);
        const [id] = r.fullOutput!.stdout!.split("/").slice(-2);
        const full = (await t.engine.readSavedOutput(id!, "stdout")).toString();
        expect(full).toHaveLength(200007);
        expect(full.endsWith("END-OUT")).toBe(true);
        expect((await t.engine.readSavedOutput(id!, "stderr")).toString().endsWith("END-ERR")).toBe(true);
        await expect(t.engine.readSavedOutput(id!, "stdout", "someone-else")).rejects.toMatchObject({ code: "OUTPUT_NOT_FOUND" });
        // Nothing of it was written into the workspace.
        const listing = await t.engine.files.list(s.id, "/workspace/.sandgate").catch(() => undefined);
        if (name === "files") expect(listing?.entries.map((e) => e.type)).toEqual(["directory"]);
      } finally {
        await t.engine.sessions.stop(s.id);
      }
    }
    expectSecretUntouched();
  });

  it("is not blocked by FIFOs planted at the old saved-output paths, and the server keeps answering", async () => {
    const s = t.engine.sessions.create();
    const server = await startTestServer(t.engine, t.config);
    try {
      const plant = "import os\nos.makedirs('/workspace/.sandgate/outputs')\nfor n in range(1, 6):\n    os.mkfifo(f'/workspace/.sandgate/outputs/{n}-stdout.txt')\n    os.mkfifo(f'/workspace/.sandgate/outputs/{n}-stderr.txt')";
      expect(await t.engine.execute({ code: plant, language: "python", sessionId: s.id })).toMatchObject({ status: "ok" });
      // Another caller's code runs through the real server, again and again, while the flood's output is saved:
      // a host opening a planted FIFO would hang the flood, and the loop or the thread pool with it.
      const api = jsonApi(() => server.url);
      const { result: r, probes } = await probeWhile(t.engine.execute({ code: FLOOD, language: "python", sessionId: s.id }), () =>
        api<WireExecutionResult>("/execute", { json: { code: "1 + 1", language: "python" } }),
      );
      expect(r).toMatchObject({ status: "ok", truncated: true });
      for (const probe of probes) expect(probe.body).toMatchObject({ status: "ok", value: 2 });
      await expect(t.engine.files.read(s.id, ".sandgate/outputs/2-stdout.txt")).rejects.toMatchObject({ code: "NOT_A_FILE" });
    } finally {
      await server.close();
      await t.engine.sessions.stop(s.id);
    }
  });
});

describe("file calls while sandbox code swaps a parent directory for a symlink", () => {
  // Without cgroups nothing freezes the session between calls, so its thread races every file call.
  const t = useTestEngine({ SANDGATE_CGROUPS: "off" }, { python: 0, javascript: 0, bash: 0 });

  it("never reads the root-only host file and never creates a file outside, over 300 calls or more", async () => {
    const s = t.engine.sessions.create();
    try {
      // A thread left running swaps "d" (a directory holding "secret") and "l" (a link to the root-only
      // host directory) with renameat2(RENAME_EXCHANGE) in tight bursts: "d" always exists, half the time as the link.
      // (A thread, since the runner kills processes left behind by a call.)
      const racer = [
        "import ctypes, os",
        "os.chdir('/workspace')",
        "os.mkdir('d')",
        "open('d/secret', 'w').write('inside')",
        `os.symlink(${JSON.stringify(secretDir)}, 'l')`,
        "import threading",
        "libc = ctypes.CDLL(None, use_errno=True)",
        "import time",
        "def race():",
        "    while True:",
        // Bursts of swaps (the race) with short pauses (stable states), whatever the host's load.
        "        for _ in range(200):",
        "            libc.renameat2(-100, b'd', -100, b'l', 2)",
        "        time.sleep(0.001)",
        "threading.Thread(target=race, daemon=True).start()",
      ].join("\n");
      // The large flavor's process limit: without cgroups RLIMIT_NPROC counts every sandbox of the host user.
      expect(await t.engine.execute({ code: racer, language: "python", sessionId: s.id, flavor: "large" })).toMatchObject({ status: "ok" });
      const seen = new Set<string>();
      // At least 150 rounds, and on until both sides of the race were seen (a loaded host can
      // land every early call mid-swap), at most 600.
      const raced = (): boolean => (seen.has("inside") || seen.has("ok")) && seen.has("PATH_INVALID");
      for (let i = 0; i < 600 && (i < 150 || !raced()); i++) {
        const read = await t.engine.files.read(s.id, "d/secret").then(
          (r) => r.content,
          (e: { code?: string }) => e.code ?? "?",
        );
        seen.add(read);
        expect(read).not.toBe(SECRET_TEXT);
        const wrote = await t.engine.files.write(s.id, `d/new-${i}`, "x").then(
          () => "ok",
          (e: { code?: string }) => e.code ?? "?",
        );
        seen.add(wrote);
        expect(readdirSync(secretDir)).toEqual(["secret"]);
      }
      expectSecretUntouched();
      // The race did happen: the calls saw both the directory and the link.
      expect(seen.has("inside") || seen.has("ok")).toBe(true);
      expect(seen.has("PATH_INVALID")).toBe(true);
    } finally {
      await t.engine.sessions.stop(s.id);
    }
  });
});

describe("deleting workspaces and the inode quota", () => {
  let t: TestEngine;
  let shm: string;
  beforeAll(() => {
    // On tmpfs: a loaded disk takes minutes to create and delete 100,000 entries.
    shm = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "sandgate-test-"));
    // Plain-directory workspaces: the file helper deletes these trees (a workspace filesystem of its own is just unmounted).
    t = createTestEngine(
      { SANDBOX_DIR: shm, SANDGATE_MAX_WORKSPACE_INODES: "200000", MAX_EXECUTION_TIME: "120", SANDGATE_WORKSPACE_FS: "directory" },
      { python: 1, javascript: 0, bash: 0 },
    );
  });
  afterAll(async () => {
    await t.close();
    rmSync(shm, { recursive: true, force: true });
    // File helpers (kept per session, or deleting in the background) are gone with the engine.
    expect(descendantPids()).toEqual([]);
  });

  function workspaceDirs(): string[] {
    return readdirSync(t.engine.runtime.workspacesDir).filter((n) => !n.startsWith("."));
  }

  it("stops sessions with a tree deeper than PATH_MAX (unreadable directories inside) and with 100,000 entries while the loop keeps serving; the same id starts empty", async () => {
    const deep = [
      "import os",
      "os.chdir('/workspace')",
      "for i in range(2100):",
      "    os.mkdir('a')",
      "    os.chdir('a')",
      "    if i == 2000:",
      "        open('leaf', 'w').write('x')",
      "open('bottom', 'w').write('x')",
      "os.chdir('/workspace')",
      "os.chmod('a/a/a', 0o500)",
      "os.chmod('a/a/a/a/a', 0)",
    ].join("\n");
    const wide = [
      "import os",
      "for d in range(10):",
      "    os.mkdir(f'/workspace/d{d}')",
      "for i in range(100000):",
      "    open(f'/workspace/d{i % 10}/f{i}', 'w').close()",
    ].join("\n");
    for (const [name, code] of Object.entries({ deep, wide })) {
      const s = t.engine.sessions.create("same-id");
      // The baseline: the loop's longest stall while the host only waits for the sandbox to build the tree.
      const quiet = sampleLoopStall();
      const r = await t.engine.execute({ code, language: "python", sessionId: s.id });
      const baseline = quiet.stop();
      // A tree too deep for the usage walk counts as over the limit.
      if (name === "deep") expect(r.error?.type, `${name}: ${r.stderr}`).toBe("WorkspaceLimit");
      else expect(r.status, `${name}: ${r.stderr}`).toBe("ok");
      const stall = sampleLoopStall();
      let longest: number;
      try {
        const stopped = t.engine.sessions.stop(s.id);
        const meanwhile = await t.engine.execute({ code: "2 + 2", language: "python" });
        await expect(stopped, name).resolves.toBeUndefined();
        expect(meanwhile).toMatchObject({ status: "ok", value: 4 });
        await t.engine.sessions.manager.reaper.settled();
      } finally {
        longest = stall.stop();
      }
      // Deleting 100,000 entries in one synchronous stretch would hold the loop for seconds.
      expect(longest, `${name}: longest stall ${longest.toFixed(0)} ms, baseline ${baseline.toFixed(0)} ms`).toBeLessThan(allowedStall(baseline));
      expect(workspaceDirs(), name).toEqual([]);
      expect(readdirSync(join(t.engine.runtime.workspacesDir, ".trash")), name).toEqual([]);
      const again = t.engine.sessions.create("same-id");
      expect((await t.engine.files.list(again.id)).entries, name).toEqual([]);
      await t.engine.sessions.stop(again.id);
    }
  });

  it("deletes at start-up the workspaces a dead sandgate process left behind, and keeps a live process's", async () => {
    const root = t.engine.runtime.workspacesDir;
    const orphan = join(root, "orphan-0123456789ab");
    mkdirSync(join(orphan, "a", "b"), { recursive: true, mode: 0o700 });
    writeFileSync(join(orphan, "a", "b", "data"), "left behind");
    const user = t.engine.runtime.hostUser;
    if (user) execFileSync("chown", ["-R", `${user.uid}:${user.gid}`, orphan]);
    const dead = spawnSync("true").pid;
    writeFileSync(join(root, ".owners", "orphan-0123456789ab"), String(dead));
    const live = t.engine.sessions.create("still-here");
    await t.engine.files.write(live.id, "kept.txt", "mine");
    const second = createTestEngine({ SANDBOX_DIR: shm }, { python: 0, javascript: 0, bash: 0 });
    try {
      expect(await waitFor(() => !existsSync(orphan), 10_000)).toBe(true);
      await second.engine.sessions.manager.reaper.settled();
      expect(readdirSync(join(root, ".trash"))).toEqual([]);
      expect((await t.engine.files.read(live.id, "kept.txt")).content).toBe("mine");
    } finally {
      await second.close();
      await t.engine.sessions.stop(live.id);
    }
  });

  it("reports 15,000 empty directories as over the workspace limit of a plain-directory workspace, naming both limits", async () => {
    // A workspace with its own filesystem refuses the 5,001st inode itself (test/workspace-filesystem.test.ts).
    // The limit is a tenth of the default 50,000, so the code creates three times the limit in a tenth of the time.
    const small = createTestEngine({ SANDBOX_DIR: join(shm, "small"), MAX_EXECUTION_TIME: "120", SANDGATE_WORKSPACE_FS: "directory", SANDGATE_MAX_WORKSPACE_INODES: "5000" }, { python: 0, javascript: 0, bash: 0 });
    try {
      const s = small.engine.sessions.create();
      const code = "import os\nfor i in range(15000):\n    os.mkdir(f'/workspace/d{i}')";
      const r = await small.engine.execute({ code, language: "python", sessionId: s.id });
      expect(r.status).toBe("error");
      expect(r.error?.type).toBe("WorkspaceLimit");
      expect(r.error?.message).toMatch(/more than 5000 files and directories; its limits are 256 MB and 5000 files and directories/);
      await small.engine.sessions.stop(s.id);
      await small.engine.sessions.manager.reaper.settled();
      expect(readdirSync(small.engine.runtime.workspacesDir).filter((n) => !n.startsWith("."))).toEqual([]);
    } finally {
      await small.close();
    }
  }, 240_000);
});

describe("the saved-output store", () => {
  it("keeps its total under the cap after many floods, oldest going first, and forgets outputs past their retention", async () => {
    const t = createTestEngine({ SANDGATE_SAVED_OUTPUTS_MB: "1", SANDGATE_OUTPUT_TTL: "2" }, { python: 1, javascript: 0, bash: 0 });
    try {
      const flood = "import sys\nsys.stdout.write('x' * 300000)";
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const r = await t.engine.execute({ code: flood, language: "python" });
        ids.push(r.fullOutput!.stdout!.split("/").at(-2)!);
      }
      await t.engine.outputs.settled();
      const onDisk = (dir: string): number =>
        readdirSync(dir).reduce((sum, id) => sum + readdirSync(join(dir, id)).reduce((s, f) => s + lstatSync(join(dir, id, f)).size, 0), 0);
      expect(onDisk(t.engine.runtime.outputsDir)).toBeLessThanOrEqual(1024 * 1024);
      expect(statSync(t.engine.runtime.outputsDir).mode & 0o777).toBe(0o700);
      expect((await t.engine.readSavedOutput(ids[7]!, "stdout")).length).toBe(300000);
      await expect(t.engine.readSavedOutput(ids[0]!, "stdout")).rejects.toMatchObject({ code: "OUTPUT_NOT_FOUND" });
      await new Promise((resolve) => setTimeout(resolve, 2500));
      await expect(t.engine.readSavedOutput(ids[7]!, "stdout")).rejects.toMatchObject({ code: "OUTPUT_NOT_FOUND" });
    } finally {
      await t.close();
    }
  });
});
