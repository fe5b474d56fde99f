// Hosts without usable cgroups: the same attacks are held back by rlimits alone.

import { expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

// Without cgroups, RLIMIT_NPROC counts every process of the host user that sandboxes run as
// (when tests run as root). A uid of its own keeps other test files' sandboxes out of the count.
const t = useTestEngine(
  { SANDGATE_CGROUPS: "off", SANDGATE_OUTPUT_CAP: "1048576", SANDGATE_SANDBOX_UID: "65533", SANDGATE_SANDBOX_GID: "65533" },
  { python: 0, javascript: 0, bash: 0 },
);

it("runs without cgroups and says so", () => {
  expect(t.engine.runtime.cgroups.mode).toBe("none");
});

it("a Python memory bomb ends as memory_limit (address-space limit)", async () => {
  const r = await t.engine.execute({ language: "python", memoryMb: 64, code: "x = []\nwhile True:\n    x.append(' ' * 10_000_000)" });
  expect(r.status).toBe("memory_limit");
});

it("a JavaScript memory bomb ends as memory_limit (V8 heap limit)", async () => {
  const r = await t.engine.execute({ language: "javascript", memoryMb: 64, code: "const a = [];\nwhile (true) a.push(new Array(1e6).fill(1));" });
  expect(r.status).toBe("memory_limit");
});

it("a fork bomb is held to the flavor's process count and the host keeps working", async () => {
  const r = await t.engine.execute({ language: "bash", flavor: "small", timeoutS: 5, code: "b(){ b | b & }; b; sleep 1; echo survived; ulimit -u" });
  expect(r.stdout).toContain("survived");
  expect(r.stdout).toContain("32");
  expect((await t.engine.execute({ language: "python", code: "'host fine'" })).value).toBe("host fine");
});

it("a flood still ends as output_limit", async () => {
  expect((await t.engine.execute({ language: "bash", code: "yes flood" })).status).toBe("output_limit");
});
