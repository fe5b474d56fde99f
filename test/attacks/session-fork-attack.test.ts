// A session's own code against its fork: a file it keeps appending to, a directory nesting past
// what a walk may hold, and a link loop. The fork ends, bounded, and a refused one leaves nothing.

import { describe, expect, it } from "vitest";
import { isSandgateError } from "../../src/errors/index.js";
import { useTestEngine } from "../helpers.js";

const t = useTestEngine({}, { python: 1, javascript: 0, bash: 1 });

async function bash(sessionId: string, code: string, keepProcesses = false): Promise<string> {
  const result = await t.engine.execute({ language: "bash", code, sessionId, ...(keepProcesses ? { keepProcesses } : {}) });
  expect(result.status, result.stderr).toBe("ok");
  return result.stdout;
}

describe("forking a hostile session", () => {
  it("copies a file the session keeps appending to only up to the size it had, and ends", async () => {
    t.engine.sessions.create("grower");
    await bash("grower", "( while :; do head -c 65536 /dev/zero >> grow.bin; done ) >/dev/null 2>&1 &\nsleep 0.5; echo started", true);
    const started = Date.now();
    const { info, copied } = await t.engine.sessions.fork("grower", undefined, { id: "grower-copy" });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(info.id).toBe("grower-copy");
    expect(copied.files).toBe(1);
    const size = Number((await bash("grower-copy", "stat -c %s grow.bin")).trim());
    expect(size).toBeGreaterThan(0);
    expect(size).toBeLessThanOrEqual(copied.bytes);
    await t.engine.sessions.stop("grower");
    await t.engine.sessions.stop("grower-copy");
  });

  it("refuses a tree nested deeper than a walk may go, with WORKSPACE_FULL, and leaves no session", async () => {
    t.engine.sessions.create("deep");
    await bash("deep", 'p=.; for i in $(seq 900); do p="$p/d"; done; mkdir -p "$p" && echo made');
    const before = t.engine.sessions.count;
    const error: unknown = await t.engine.sessions.fork("deep", undefined, { id: "deep-copy" }).catch((e: unknown) => e);
    expect(isSandgateError(error) && error.code).toBe("WORKSPACE_FULL");
    expect((error as Error).message).toMatch(/too deep/);
    expect(t.engine.sessions.count).toBe(before);
    await t.engine.sessions.stop("deep");
  });

  it("copies a link loop and a link to the host's root as links, never walking through them", async () => {
    t.engine.sessions.create("loops");
    await bash("loops", "mkdir d && ln -s .. d/up && ln -s / root && ln -s loop loop && echo ok");
    const { copied } = await t.engine.sessions.fork("loops", undefined, { id: "loops-copy" });
    expect(copied).toMatchObject({ directories: 1, links: 3, files: 0 });
    expect(await bash("loops-copy", "readlink d/up root loop")).toBe("..\n/\nloop\n");
    await t.engine.sessions.stop("loops");
    await t.engine.sessions.stop("loops-copy");
  });
});
