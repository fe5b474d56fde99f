// `sandgate packages sync` runs as root on the host, so nothing of the package set it installs may
// run there: not a wheel's top-level .pth file, not a module that shadows what the sync itself imports.

import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { syncPackages, type SyncOutcome } from "../../src/cli/package-sync.js";

/** A wheel holding exactly `files` (name to text), with its dist-info written here. */
function makeWheel(dir: string, name: string, version: string, files: Record<string, string>): void {
  const script = `
import base64, hashlib, json, sys, zipfile
name, version, out = sys.argv[1:4]
files = json.loads(sys.argv[4])
files[f"{name}-{version}.dist-info/METADATA"] = f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n"
files[f"{name}-{version}.dist-info/WHEEL"] = "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
record = [f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b'=').decode()},{len(c)}" for n, c in files.items()]
with zipfile.ZipFile(f"{out}/{name}-{version}-py3-none-any.whl", "w") as z:
    for n, c in files.items():
        z.writestr(n, c)
    z.writestr(f"{name}-{version}.dist-info/RECORD", "\\n".join(record + [f"{name}-{version}.dist-info/RECORD,,"]) + "\\n")
`;
  execFileSync("/usr/bin/python3", ["-I", "-c", script, name, version, dir, JSON.stringify(files)]);
}

describe("packages sync never runs the package set on the host", () => {
  const tag = randomBytes(6).toString("hex");
  const pthMarker = `/tmp/pwned-pth-${tag}`;
  const shadowMarker = `/tmp/pwned-shadow-${tag}`;
  let dir: string;
  let python: SyncOutcome | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sandgate-sync-safety-"));
    const wheels = join(dir, "wheels");
    mkdirSync(wheels);
    makeWheel(wheels, "pwnpkg", "1.0", {
      "pwnpkg/__init__.py": "VALUE = 1\n",
      // site runs the import lines of every .pth in site-packages at interpreter start.
      "pwnpkg-hook.pth": `import os; open(${JSON.stringify(pthMarker)}, "w").close()\n`,
      // The probe parses requirements with `packaging`: a wheel's own would come first on a venv's path.
      "packaging/__init__.py": `open(${JSON.stringify(shadowMarker)}, "w").close()\n`,
    });
    const config = loadConfig({ SANDBOX_DIR: join(dir, "sd"), SANDGATE_PYTHON_PACKAGES: "pwnpkg==1.0" });
    [python] = await syncPackages(config, { progress: () => {}, findLinks: [wheels], noIndex: true });
  }, 180_000);

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(pthMarker, { force: true });
    rmSync(shadowMarker, { force: true });
  });

  it("a wheel with a top-level .pth file is installed and its import line never runs on the host", () => {
    expect(python?.failures).toEqual([]);
    expect(python?.status).toBe("installed");
    expect(existsSync(pthMarker)).toBe(false);
  });

  it("a wheel shipping its own `packaging` module is not imported by the sync's probe", () => {
    expect(python?.status).toBe("installed");
    expect(existsSync(shadowMarker)).toBe(false);
  });

  it("the probe still finds the package in the set, its version and its modules", () => {
    const pkg = python?.manifest?.packages.find((p) => p.name === "pwnpkg");
    expect(pkg).toMatchObject({ version: "1.0", source: "venv" });
    expect(pkg?.modules).toContain("pwnpkg");
  });
});
