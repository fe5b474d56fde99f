// The admin's package sets: `sandgate packages sync` builds them on the host (pip from a local wheel,
// a Debian package already on the system, npm from the registry) and real sandboxes import them read-only.

import { chmodSync, existsSync, mkdirSync, mkdtempSync, readlinkSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, type SandgateConfig } from "../../src/config/index.js";
import type { App } from "../../src/app/index.js";
import type { Engine } from "../../src/execution/index.js";
import { packageSetState, syncPackages } from "../../src/cli/package-sync.js";
import { connectMcp } from "../fixtures/mcp-client.js";
import { runCli } from "../fixtures/cli.js";
import { createTestApp, useTestEngine } from "../helpers.js";
import { withServer } from "../server-helpers.js";

/** A wheel of a tiny pure-Python package, built here: pip installs it with --find-links, no index needed. */
function makeWheel(dir: string, name: string, version: string, value: number): void {
  const script = `
import base64, hashlib, sys, zipfile
name, version, value, out = sys.argv[1:5]
files = {f"{name}/__init__.py": f"VALUE = {value}\\n",
         f"{name}-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n",
         f"{name}-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}
record = [f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b'=').decode()},{len(c)}" for n, c in files.items()]
with zipfile.ZipFile(f"{out}/{name}-{version}-py3-none-any.whl", "w") as z:
    for n, c in files.items():
        z.writestr(n, c)
    z.writestr(f"{name}-{version}.dist-info/RECORD", "\\n".join(record + [f"{name}-{version}.dist-info/RECORD,,"]) + "\\n")
`;
  execFileSync("/usr/bin/python3", ["-I", "-c", script, name, version, String(value), dir]);
}

const quiet = { progress: () => {} };

describe("package sets in sandboxes", () => {
  let dir: string;
  let wheels: string;
  let config: SandgateConfig;
  let app: App;
  let engine: Engine;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sandgate-packages-"));
    chmodSync(dir, 0o711); // the sandbox user passes through to SANDBOX_DIR inside it
    wheels = join(dir, "wheels");
    mkdirSync(wheels);
    makeWheel(wheels, "tinypkg", "1.0", 42);
    config = loadConfig({ SANDBOX_DIR: join(dir, "sd"), MAX_EXECUTION_TIME: "20", SANDGATE_PYTHON_PACKAGES: "numpy,tinypkg", SANDGATE_NODE_PACKAGES: "is-number@7" });
    const outcomes = await syncPackages(config, { ...quiet, findLinks: [wheels], noIndex: true });
    expect(outcomes.map((o) => [o.language, o.status, o.failures])).toEqual([
      ["python", "installed", []],
      ["node", "installed", []],
    ]);
    app = createTestApp(config, { pool: { python: 0, javascript: 0, bash: 0 } });
    engine = app.engine;
  }, 240_000);

  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("Python code imports a package from the system and one pip installed into the set, read from /sandgate/packages", async () => {
    const result = await engine.execute({
      language: "python",
      code: "import numpy, tinypkg\n[int(numpy.arange(4).sum()), tinypkg.VALUE, tinypkg.__file__]",
      timeoutS: 15,
    });
    expect(result.status).toBe("ok");
    expect(result.value).toEqual([6, 42, "/sandgate/packages/python/site-packages/tinypkg/__init__.py"]);
  });

  it("python3 started from a shell, by name or by path, sees the same set", async () => {
    const result = await engine.executeCommand({
      command: "python3 -c 'import tinypkg; print(tinypkg.VALUE)' && /usr/bin/python3 -c 'import tinypkg, numpy; print(tinypkg.VALUE + 1)'",
      timeoutS: 15,
    });
    expect(result.stderr).toBe("");
    expect(result.stdout.trim().split("\n")).toEqual(["42", "43"]);
  });

  it("JavaScript requires and imports the synced npm package", async () => {
    const result = await engine.execute({
      language: "javascript",
      code: "const isNumber = require('is-number');\nconst imported = await import('is-number');\n[isNumber(5), isNumber('x'), imported.default(7)]",
      timeoutS: 15,
    });
    expect(result.error).toBeUndefined();
    expect(result.value).toEqual([true, false, true]);
  });

  it("the package sets are read-only inside the sandbox", async () => {
    const result = await engine.executeCommand({
      command:
        "for f in /sandgate/packages/python/site-packages/tinypkg/new.py /sandgate/packages/node/node_modules/is-number/index.js /sandgate/packages/python/sandgate-packages.txt; do " +
        "if ( : > \"$f\" ) 2>/dev/null; then echo \"WROTE $f\"; else echo refused; fi; done",
      timeoutS: 15,
    });
    expect(result.stdout.trim().split("\n")).toEqual(["refused", "refused", "refused"]);
  });

  it.each([
    ["pip install requests", "requests"],
    ["pip3 install -U requests flask", "requests, flask"],
    ["python3 -m pip install requests", "requests"],
    ["/usr/bin/python3 -m pip install --user requests", "requests"],
  ])("`%s` fails at once naming the package, the setting and the installed set", async (command, wanted) => {
    const result = await engine.executeCommand({ command, timeoutS: 10 });
    expect(result.status).toBe("error");
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`no network in this sandbox: ask the admin to add ${wanted} to python.packages`);
    expect(result.stderr).toContain("use the installed set: numpy, tinypkg");
    expect(result.stderr).not.toMatch(/externally-managed|SSL|TLS|Retrying/i);
  });

  it("pip commands that need no index still run the real pip", async () => {
    const result = await engine.executeCommand({ command: "pip --version && pip show tinypkg | head -2 && pip list 2>/dev/null | grep -c '^tinypkg ' && ls -A /workspace", timeoutS: 15 });
    expect(result.status).toBe("ok");
    expect(result.stdout).toMatch(/^pip \d+/);
    expect(result.stdout).toContain("Name: tinypkg");
    // Listed once, and nothing (no pip cache) written into the workspace.
    expect(result.stdout.trim().split("\n").at(-1)).toBe("1");
  });

  it("import pip as a library gives the real pip, not the install shim", async () => {
    const result = await engine.executeCommand({ command: "python3 -c 'import pip; print(pip.__file__)'", timeoutS: 15 });
    expect(result.stdout.trim()).toMatch(/^\/usr\/lib\/python3\/dist-packages\/pip\/__init__\.py$/);
  });

  it.each([
    ["npm install left-pad", "npm install", "left-pad"],
    ["npm i -D left-pad lodash", "npm i", "left-pad, lodash"],
    ["npx cowsay hello", "npx", "cowsay"],
  ])("`%s` fails at once with the no-network message", async (command, prefix, wanted) => {
    const result = await engine.executeCommand({ command, timeoutS: 10 });
    expect(result.status).toBe("error");
    expect(result.stderr).toContain(`${prefix}: no network in this sandbox: ask the admin to add ${wanted} to node.packages`);
    expect(result.stderr).toContain("use the installed set: is-number");
  });

  it("npm commands that need no registry run the real npm", async () => {
    const result = await engine.executeCommand({ command: "npm --version", timeoutS: 15 });
    expect(result.status).toBe("ok");
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("a missing Python module's error says how to get it; a missing submodule of an installed package does not", async () => {
    const missing = await engine.execute({ language: "python", code: "import sklearn", timeoutS: 15 });
    expect(missing.error?.type).toBe("ModuleNotFoundError");
    expect(missing.error?.message).toBe(
      "No module named 'sklearn'; no network in this sandbox: ask the admin to add sklearn to python.packages (then `sandgate packages sync`), or use the installed set: numpy, tinypkg",
    );
    expect(missing.error?.traceback).toContain("ask the admin to add sklearn");
    const sub = await engine.execute({ language: "python", code: "import numpy.nosuchthing", timeoutS: 15 });
    expect(sub.error?.message).toBe("No module named 'numpy.nosuchthing'");
  });

  it("a missing npm package's error says how to get it, for require and import", async () => {
    for (const code of ["require('left-pad/index.js')", "await import('left-pad')"]) {
      const result = await engine.execute({ language: "javascript", code, timeoutS: 15 });
      expect(result.status).toBe("error");
      expect(result.error?.message).toContain("ask the admin to add left-pad to node.packages (then `sandgate packages sync`), or use the installed set: is-number");
    }
    const relative = await engine.execute({ language: "javascript", code: "require('./nothing-here')", timeoutS: 15 });
    expect(relative.error?.message).not.toContain("node.packages");
  });

  it("GET /languages and the execute_code tool description name the installed packages", async () => {
    await withServer({ engine, config }, {}, async (server, api) => {
      const reply = await api<{ languages: Array<{ name: string; packages: string[] }> }>("/languages");
      expect(Object.fromEntries(reply.body.languages.map((l) => [l.name, l.packages]))).toEqual({
        python: ["numpy", "tinypkg"],
        javascript: ["is-number"],
        typescript: ["is-number"],
        bash: [],
      });
      const { client } = await connectMcp(server.url);
      try {
        const { tools } = await client.listTools();
        const description = tools.find((t) => t.name === "execute_code")?.description ?? "";
        expect(description).toContain("Installed packages (besides the system's): Python: numpy, tinypkg; JavaScript/TypeScript: is-number");
        expect(description).toContain("pip and npm cannot install more (no network)");
        const sessionId = tools.find((t) => t.name === "execute_code")?.inputSchema.properties?.session_id as { description?: string } | undefined;
        expect(sessionId?.description).not.toMatch(/installed packages persist/);
      } finally {
        await client.close();
      }
    });
  });

  it("packages list state says the sets match the config, and not once the config changes", async () => {
    const state = await packageSetState(config, "python");
    expect(state.inSync).toBe(true);
    expect(state.manifest?.packages.map((p) => [p.name, p.source])).toEqual([
      ["numpy", "system"],
      ["tinypkg", "venv"],
    ]);
    const changed = { ...config, python: { packages: ["numpy", "tinypkg", "pandas"] } };
    expect((await packageSetState(changed, "python")).inSync).toBe(false);
  });
});

describe("without a package set", () => {
  const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

  it("installs and missing modules still fail at once with the advice, naming no installed set", async () => {
    const pip = await fx.engine.executeCommand({ command: "pip install requests", timeoutS: 10 });
    // This host has Debian's numpy, pandas and matplotlib: the advice names them (and any other module of note it finds).
    expect(pip.stderr).toMatch(
      /^pip install: no network in this sandbox: ask the admin to add requests to python\.packages \(then `sandgate packages sync`\), or use what the system has: numpy, pandas, matplotlib(, \w+)*\n$/,
    );
    const missing = await fx.engine.execute({ language: "javascript", code: "require('left-pad')", timeoutS: 10 });
    expect(missing.error?.message).toContain("ask the admin to add left-pad to node.packages (then `sandgate packages sync`), or use what the system has");
  });
});

describe("packages sync", () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "sandgate-packages-sync-"));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("a failed sync names the package and leaves the previous set active with nothing half-installed", async () => {
    const wheels = join(dir, "wheels");
    mkdirSync(wheels, { recursive: true });
    makeWheel(wheels, "firstpkg", "2.0", 1);
    const sandboxDir = join(dir, "sd");
    const good = loadConfig({ SANDBOX_DIR: sandboxDir, SANDGATE_PYTHON_PACKAGES: "firstpkg" });
    const [first] = await syncPackages(good, { ...quiet, findLinks: [wheels], noIndex: true });
    expect(first?.status).toBe("installed");
    const active = readlinkSync(join(sandboxDir, "packages", "python"));

    const listed = await runCli(["packages", "list", "--json"], { env: { SANDBOX_DIR: sandboxDir, SANDGATE_PYTHON_PACKAGES: "firstpkg" } });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({
      python: { configured: ["firstpkg"], in_sync: true, packages: [{ name: "firstpkg", version: "2.0", source: "venv", modules: ["firstpkg"] }] },
      node: { configured: [], in_sync: true, packages: [] },
    });
    const text = await runCli(["packages", "list"], { env: { SANDBOX_DIR: sandboxDir, SANDGATE_PYTHON_PACKAGES: "firstpkg,other" } });
    expect(text.stdout).toMatch(/^python: .*NOT in sync with the config: run `sandgate packages sync`/);
    expect(text.stdout).toMatch(/\n {2}firstpkg +2\.0 +venv\n/);

    const bad = loadConfig({ SANDBOX_DIR: sandboxDir, SANDGATE_PYTHON_PACKAGES: "firstpkg,no-such-package-zz>=1" });
    const cli = await runCli(["packages", "sync", "--find-links", wheels, "--no-index"], {
      env: { SANDBOX_DIR: sandboxDir, SANDGATE_PYTHON_PACKAGES: "firstpkg,no-such-package-zz>=1" },
    });
    expect(cli.code).toBe(1);
    expect(cli.stdout).toMatch(/^python: FAILED, the previous set stays active:\n {2}firstpkg, no-such-package-zz>=1: pip could not install them/);
    const [failed] = await syncPackages(bad, { ...quiet, findLinks: [wheels], noIndex: true });
    expect(failed?.status).toBe("failed");
    expect(failed?.failures[0]?.spec).toContain("no-such-package-zz>=1");
    expect(failed?.failures[0]?.reason).toContain("python3-no-such-package-zz");
    expect(readlinkSync(join(sandboxDir, "packages", "python"))).toBe(active);
    expect(execFileSync("ls", ["-A", join(sandboxDir, "packages")], { encoding: "utf8" }).trim().split("\n").sort()).toEqual([active, "python"].sort());

    // Emptying the list stops mounting the set in new sandboxes.
    const none = loadConfig({ SANDBOX_DIR: sandboxDir });
    const [emptied] = await syncPackages(none, quiet);
    expect(emptied?.status).toBe("none");
    expect(existsSync(join(sandboxDir, "packages", "python"))).toBe(false);
  }, 120_000);

  it("config refuses package entries that are URLs, paths, options or shell text", () => {
    for (const bad of ["-e .", "git+https://x/y", "../pkg", "numpy; rm -rf /", "https://example.test/x.whl", "pkg @ file:///x"]) {
      expect(() => loadConfig({ SANDGATE_PYTHON_PACKAGES: bad })).toThrow(/pip requirement/);
    }
    for (const bad of ["--global", "git+ssh://x", "file:../x", "lodash@https://x", "Lodash", "a b"]) {
      expect(() => loadConfig({ SANDGATE_NODE_PACKAGES: bad })).toThrow(/npm registry package/);
    }
    expect(loadConfig({ SANDGATE_PYTHON_PACKAGES: "numpy>=1.24,<3, pandas[excel] , scipy==1.10.*" }).python.packages).toEqual(["numpy>=1.24,<3", "pandas[excel]", "scipy==1.10.*"]);
    expect(loadConfig({ SANDGATE_NODE_PACKAGES: "lodash,@scope/pkg@^1.2.0,date-fns@3" }).node.packages).toEqual(["lodash", "@scope/pkg@^1.2.0", "date-fns@3"]);
  });
});
