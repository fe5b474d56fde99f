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

/** The tools of note the host has (one is the host's when its /usr/bin path resolves). */
const HOST_TOOLS = ([["cc", "/usr/bin/cc"], ["vi", "/usr/bin/vi"], ["jq", "/usr/bin/jq"], ["sqlite3", "/usr/bin/sqlite3"]] as const).filter(([, path]) => hostHas(path)).map(([tool]) => tool);

let listing: Promise<Report["capabilities"]> | undefined;
/** One `sandgate doctor --json` (a sandbox per language) for the tests that read its listing. */
function capabilities(): Promise<Report["capabilities"]> {
  listing ??= doctor(["--json"]).then((r) => {
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as Report).capabilities;
  });
  return listing;
}

describe("sandgate doctor's listing of what code can use", () => {
  it("reports the Python version, which modules of note import, Node's version and the tools found inside a sandbox", async () => {
    const caps = await capabilities();
    expect(caps.python.version).toBe(execFileSync("/usr/bin/python3", ["-c", "import platform; print(platform.python_version())"], { encoding: "utf8" }).trim());
    for (const name of ["numpy", "pandas", "matplotlib"]) {
      const entry = caps.python.modules.find((m) => m.name === name);
      if (hostImports(name)) expect(entry).toMatchObject({ name, version: expect.stringMatching(/^\d/) });
      else expect(entry?.error).toBeDefined();
    }
    expect(caps.node.version).toMatch(/^v\d+\./);
    // awk and which are links through /etc/alternatives: present only when the sandbox sees the host image.
    expect(caps.tools.present).toEqual(expect.arrayContaining(["awk", "sed", "grep", "which"]));
    expect(caps.tools.present.filter((tool) => caps.tools.missing.includes(tool))).toEqual([]);
    expect(caps.howToAdd.join("\n")).toContain("sandgate packages sync");
    expect(caps.howToAdd.join("\n")).toContain("apt-get install");
  });

  it.runIf(hostHas("/usr/bin/node"))("reports the version of the host's /usr/bin/node, which code runs", async () => {
    expect((await capabilities()).node.version).toBe(execFileSync("/usr/bin/node", ["--version"], { encoding: "utf8" }).trim());
  });

  it.runIf(HOST_TOOLS.length > 0)(`lists as present the tools the host has (${HOST_TOOLS.join(", ")})`, async () => {
    expect((await capabilities()).tools.present).toEqual(expect.arrayContaining(HOST_TOOLS));
  });

  it.runIf(!hostImports("sklearn"))("names the Debian package that adds a module of note the host lacks (python3-sklearn)", async () => {
    expect((await capabilities()).howToAdd.join("\n")).toContain("python3-sklearn");
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
