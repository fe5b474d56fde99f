// Every process sandgate starts has an owner: after closing the engine, the host's process
// and fd counts are back where they started, and no sandbox cgroup is left behind.

import { existsSync, readdirSync } from "node:fs";
import { expect, it } from "vitest";
import { createTestEngine, descendantPids, openFds, waitFor } from "../helpers.js";

it("leaves no process, fd or cgroup behind after sessions, pool and stateless calls", async () => {
  const baselinePids = descendantPids();
  const baselineFds = openFds().length;
  const t = createTestEngine({}, { python: 2, javascript: 1, bash: 1 });
  const sessions = [t.engine.sessions.create(), t.engine.sessions.create()];
  await Promise.all([
    t.engine.execute({ language: "python", sessionId: sessions[0]!.id, code: "import threading, time\nthreading.Thread(target=time.sleep, args=(100,), daemon=True).start()" }),
    t.engine.execute({ language: "bash", sessionId: sessions[1]!.id, code: "sleep 100 & echo bg" }),
    t.engine.execute({ language: "javascript", code: "setInterval(() => {}, 1000); 1" }),
    t.engine.execute({ language: "python", code: "print(1)" }),
  ]);
  expect(descendantPids().length).toBeGreaterThan(baselinePids.length);
  const cgroups = t.engine.runtime.cgroups;
  await t.close();
  expect(await waitFor(() => descendantPids().length === baselinePids.length)).toBe(true);
  expect(await waitFor(() => openFds().length <= baselineFds)).toBe(true);
  for (const parent of Object.values(cgroups.parents)) {
    if (!existsSync(parent)) continue;
    expect(readdirSync(parent).filter((d) => d.startsWith(`sg-${process.pid}-`))).toEqual([]);
  }
});
