// Every process sandgate starts has an owner: after closing the engine, the host's process
// and fd counts are back where they started, and no sandbox cgroup is left behind.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { detectCgroups } from "../../src/sandbox/index.js";
import { removeStaleCgroups } from "../../src/sandbox/cgroups.js";
import { useRawRuntime } from "../fixtures/runtime.js";
import { createTestEngine, descendantPids, openFds, waitFor } from "../helpers.js";

/** This process's sandbox cgroups under `parents`. */
const ownCgroups = (parents: Record<string, string>): string[] =>
  Object.values(parents).flatMap((parent) => (existsSync(parent) ? readdirSync(parent).filter((d) => d.startsWith(`sg-${process.pid}-`)).map((d) => join(parent, d)) : []));

it("leaves no process, fd or cgroup behind after sessions, pool and stateless calls", async () => {
  const baselinePids = descendantPids();
  const baselineFds = openFds().length;
  // A test worker runs file after file in one process: count only cgroups made after this point.
  const baselineCgroups = new Set(ownCgroups(detectCgroups().parents));
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
  expect(ownCgroups(cgroups.parents).filter((dir) => !baselineCgroups.has(dir))).toEqual([]);
});

it.runIf(detectCgroups().mode !== "none")("removes at start-up the cgroups a killed sandgate left, named either way, and none of a live one's", () => {
  const support = detectCgroups();
  // A pid no process has: past the kernel's pid limit.
  const dead = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8")) + 1;
  const names = [`sg-${dead}-7`, `sg-${dead}-k3x9q1-8`, `sg-${process.pid}-zz0test-9`];
  const made: string[] = [];
  for (const parent of Object.values(support.parents)) for (const name of names) made.push((mkdirSync(join(parent, name)), join(parent, name)));
  try {
    removeStaleCgroups(support);
    const left = made.filter((dir) => existsSync(dir)).map((dir) => dir.slice(dir.lastIndexOf("/") + 1));
    // The dead process's cgroups are gone, old and new names alike; this live process's stays.
    expect(new Set(left)).toEqual(new Set([`sg-${process.pid}-zz0test-9`]));
  } finally {
    for (const dir of made) if (existsSync(dir)) rmdirSync(dir);
  }
});

describe.runIf(detectCgroups().mode !== "none")("a runtime used without an engine (library code, the raw fixture)", () => {
  const raw = useRawRuntime("cleanup-raw");

  it("removes its sandboxes' idle cgroups when it closes, and the cgroup of a sandbox released after that at once", async () => {
    const baseline = new Set(ownCgroups(raw.runtime.cgroups.parents));
    // One name per cgroup, whatever the number of controllers it has a directory under.
    const made = (): string[] => [...new Set(ownCgroups(raw.runtime.cgroups.parents).filter((dir) => !baseline.has(dir)).map((dir) => dir.slice(dir.lastIndexOf("/") + 1)))];
    const early = await raw.start("bash");
    const late = await raw.start("bash");
    await early.dispose();
    // Kept for the next sandbox: creating a memory cgroup costs the kernel milliseconds.
    expect(made()).toHaveLength(2);
    // The runtime closes as an engine closes it (the last open in this process): what is idle goes.
    await raw.runtime.closeCgroups();
    expect(made()).toHaveLength(1);
    await late.dispose();
    expect(made()).toEqual([]);
  });
});
