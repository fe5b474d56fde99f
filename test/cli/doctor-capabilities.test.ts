// `sandgate doctor` lists what code can use, as found inside real sandboxes: Python and its
// modules of note, Node, common command-line tools, and how to add more (the built CLI; `npm run build` first).

import { execFileSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../fixtures/cli.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-doctor-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const doctor = (args: string[]) => runCli(["doctor", ...args], { env: { SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "60" } });

interface Report {
  isolated: boolean;
  capabilities: {
    python: { version: string; modules: Array<{ name: string; version?: string; error?: string }> };
    node: { version: string; modules: unknown[] };
    tools: { present: string[]; missing: string[] };
    howToAdd: string[];
  };
}

const hostHas = (path: string): boolean => {
  try {
    realpathSync(path);
    return true;
  } catch {
    return false;
  }
};

const hostImports = (module: string): boolean => {
  try {
    execFileSync("/usr/bin/python3", ["-c", `import ${module}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};

describe("sandgate doctor's listing of what code can use", () => {
  it("reports the Python version, which modules of note import, Node's version and the tools found inside a sandbox", async () => {
    const r = await doctor(["--json"]);
    expect(r.code).toBe(0);
    const { capabilities: caps } = JSON.parse(r.stdout) as Report;
    expect(caps.python.version).toBe(execFileSync("/usr/bin/python3", ["-c", "import platform; print(platform.python_version())"], { encoding: "utf8" }).trim());
    for (const name of ["numpy", "pandas", "matplotlib"]) {
      const entry = caps.python.modules.find((m) => m.name === name);
      if (hostImports(name)) expect(entry).toMatchObject({ name, version: expect.stringMatching(/^\d/) });
      else expect(entry?.error).toBeDefined();
    }
    expect(caps.node.version).toMatch(/^v\d+\./);
    if (hostHas("/usr/bin/node")) expect(caps.node.version).toBe(execFileSync("/usr/bin/node", ["--version"], { encoding: "utf8" }).trim());
    // awk and which are links through /etc/alternatives: present only when the sandbox sees the host image.
    expect(caps.tools.present).toEqual(expect.arrayContaining(["awk", "sed", "grep", "which"]));
    for (const [tool, path] of [["cc", "/usr/bin/cc"], ["vi", "/usr/bin/vi"], ["jq", "/usr/bin/jq"], ["sqlite3", "/usr/bin/sqlite3"]] as const) {
      if (hostHas(path)) expect(caps.tools.present).toContain(tool);
    }
    expect(caps.tools.present.filter((tool) => caps.tools.missing.includes(tool))).toEqual([]);
    expect(caps.howToAdd.join("\n")).toContain("sandgate packages sync");
    expect(caps.howToAdd.join("\n")).toContain("apt-get install");
    if (!hostImports("sklearn")) expect(caps.howToAdd.join("\n")).toContain("python3-sklearn");
  });

  it("prints the listing and how to add more after the checks", async () => {
    const r = await doctor([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/What code can use \(checked inside a sandbox\):\n {2}python \d+\.\d+/);
    expect(r.stdout).toMatch(/\n {2}node v\d+/);
    expect(r.stdout).toMatch(/\n {2}tools: .*awk/);
    expect(r.stdout).toContain("To add more:");
  });
});
