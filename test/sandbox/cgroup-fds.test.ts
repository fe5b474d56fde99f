// A sandbox's cgroup keeps its OOM counter file open, so each call reads it with one pread: those
// fds must not pile up as cgroups are reused, and none may outlive the engine.

import { describe, expect, it } from "vitest";
import { detectCgroups } from "../../src/sandbox/index.js";
import { createTestEngine, openFds } from "../helpers.js";

const hasMemoryCgroup = detectCgroups().controllers.includes("memory");
const cgroupFds = (): string[] => openFds().filter((target) => target.startsWith("/sys/fs/cgroup/"));

describe.runIf(hasMemoryCgroup)("the cgroups' open counter files", () => {
  it("stay one per cgroup in use while calls come and go, and are all closed with the engine", async () => {
    const before = cgroupFds().length;
    const fx = createTestEngine({}, { python: 1, javascript: 0, bash: 0 });
    const { engine } = fx;
    try {
      for (let i = 0; i < 12; i++) expect(await engine.execute({ language: "python", code: `${i} + 1` })).toMatchObject({ status: "ok", value: i + 1 });
      const session = engine.sessions.create();
      for (let i = 0; i < 20; i++) {
        expect(await engine.execute({ language: "python", sessionId: session.id, code: `${i}` })).toMatchObject({ status: "ok", value: i });
        expect(await engine.execute({ language: "bash", sessionId: session.id, code: `echo ${i}` })).toMatchObject({ status: "ok", stdout: `${i}\n` });
      }
      // Twelve one-call sandboxes came and went; what is open is bounded by the cgroups kept, not the calls made.
      const open = cgroupFds().length - before;
      expect(open).toBeGreaterThan(0);
      expect(open).toBeLessThanOrEqual(6);
      // The counter read through the kept fd still sees an OOM kill.
      expect(await engine.execute({ language: "python", sessionId: session.id, code: "b = bytearray(2048 * 1024 * 1024)\nfor i in range(0, len(b), 4096): b[i] = 1" })).toMatchObject({ status: "memory_limit" });
      await engine.sessions.stop(session.id);
    } finally {
      await fx.close();
    }
    expect(cgroupFds().length).toBe(before);
  });
});
