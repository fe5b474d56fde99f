// `sandgate packages sync`: builds each configured package set on the host in a new versioned
// directory and makes it active by replacing a link, so a sandbox never sees a half-installed set.

import { createHash } from "node:crypto";
import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { SandgateConfig } from "../config/index.js";
import { nodePackageName, pythonPackageName } from "../config/package-specs.js";
import { SandgateError } from "../errors/index.js";
import { defaultInterpreters } from "../sandbox/index.js";
import {
  activeLink,
  MANIFEST_FILE,
  NAMES_FILE,
  packagesRoot,
  readActiveManifest,
  readManifest,
  SANDBOX_PACKAGES_DIR,
  type PackageLanguage,
  type PackageManifest,
  type PackageSource,
} from "../sandbox/package-sets.js";
import { failureReason, installerEnv, runInstaller, type Progress } from "./package-install.js";

export interface SyncOptions {
  /** Install missing Python packages as Debian's python3-<name> with apt-get (root on Debian/Ubuntu only). */
  apt?: boolean;
  /** Directories or URLs of wheels and sdists pip may install from (pip --find-links). */
  findLinks?: string[];
  /** pip uses no package index, only findLinks. */
  noIndex?: boolean;
  progress: Progress;
  /** The environment installers take PATH, HOME and proxies from (the command's); this process's unless given. */
  env?: Record<string, string | undefined>;
}

export type SyncStatus = "installed" | "up-to-date" | "none" | "failed";

export interface SyncOutcome {
  language: PackageLanguage;
  status: SyncStatus;
  /** The active version's directory after the sync. */
  dir?: string;
  manifest?: PackageManifest;
  /** Why each failed package failed, with what to do. */
  failures: Array<{ spec: string; reason: string }>;
}

const INSTALL_TIMEOUT_MS = 15 * 60 * 1000;
const PROBE_TIMEOUT_MS = 60 * 1000;
/** Bumped when the layout of a version changes, so a sync rebuilds rather than reuses. */
const LAYOUT = 1;

/** The suffix of a version's directory: the specs (in any order), the interpreter's version and the layout. */
function setHash(language: PackageLanguage, specs: readonly string[], interpreterVersion: string): string {
  return createHash("sha256")
    .update(JSON.stringify({ language, specs: [...specs].sort(), interpreterVersion, layout: LAYOUT }))
    .digest("hex")
    .slice(0, 12);
}

/** The sandbox interpreter of a package language: its path and version, as the hash and manifest record it. */
async function interpreterOf(config: SandgateConfig, language: PackageLanguage): Promise<{ path: string; version: string }> {
  const found = defaultInterpreters(language === "python" ? { python: config.paths.python } : { node: config.paths.node });
  const path = language === "python" ? found.python : found.node;
  if (path === undefined) throw new SandgateError("SANDBOX_UNAVAILABLE", `the ${language} interpreter of sandboxes was not found (see \`sandgate doctor\`)`);
  const argv = language === "python" ? [path, "-I", "-S", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"] : [path, "--version"];
  const result = await runInstaller(argv, { timeoutMs: PROBE_TIMEOUT_MS });
  if (result.code !== 0) throw new SandgateError("SANDBOX_UNAVAILABLE", `${path} did not run: ${failureReason(result)}`);
  return { path, version: result.stdout.trim().replace(/^v/, "") };
}

/** Syncs every package language; a language whose list is unchanged and built is only made active. */
export async function syncPackages(config: SandgateConfig, options: SyncOptions): Promise<SyncOutcome[]> {
  const root = packagesRoot(config.sandboxDir);
  mkdirSync(root, { recursive: true });
  // Sandboxes (another uid when sandgate runs as root) must read the sets; nothing in them is secret.
  chmodSync(root, 0o755);
  const unlock = lock(root);
  try {
    return [await syncLanguage(config, "python", options), await syncLanguage(config, "node", options)];
  } finally {
    unlock();
  }
}

async function syncLanguage(config: SandgateConfig, language: PackageLanguage, options: SyncOptions): Promise<SyncOutcome> {
  const specs = language === "python" ? config.python.packages : config.node.packages;
  const root = packagesRoot(config.sandboxDir);
  if (specs.length === 0) {
    if (existsSync(activeLink(config.sandboxDir, language)) || isLink(activeLink(config.sandboxDir, language))) {
      options.progress(`${language}: no packages configured; the set is no longer mounted in new sandboxes`);
      rmSync(activeLink(config.sandboxDir, language), { force: true });
    }
    prune(root, language, []);
    return { language, status: "none", failures: [] };
  }
  const interpreter = await interpreterOf(config, language);
  const hash = setHash(language, specs, interpreter.version);
  const name = `${language}-${hash}`;
  const dir = join(root, name);
  const previous = activeTarget(config.sandboxDir, language);
  const existing = readManifest(dir);
  if (existing) {
    activate(root, language, name);
    prune(root, language, [name, previous]);
    options.progress(`${language}: ${specs.join(", ")}: up to date (${dir})`);
    return { language, status: "up-to-date", dir, manifest: existing, failures: [] };
  }
  const staging = join(root, `.${name}.tmp-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
  options.progress(`${language}: installing ${specs.join(", ")} into ${dir}`);
  try {
    const built = language === "python" ? await buildPython(staging, specs, interpreter, options) : await buildNode(staging, specs, interpreter, options);
    if (built.failures.length > 0) return { language, status: "failed", failures: built.failures };
    const manifest: PackageManifest = { language, specs: [...specs], hash, interpreter, createdAt: new Date().toISOString(), packages: built.packages };
    writeFileSync(join(staging, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    writeFileSync(join(staging, NAMES_FILE), `${manifest.packages.map((p) => p.name).join(",")}\n`);
    await runInstaller(["chmod", "-R", "a+rX", staging], { timeoutMs: PROBE_TIMEOUT_MS });
    renameSync(staging, dir);
    activate(root, language, name);
    prune(root, language, [name, previous]);
    return { language, status: "installed", dir, manifest, failures: [] };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

interface Built {
  packages: PackageManifest["packages"];
  failures: SyncOutcome["failures"];
}

interface ProbedPackage {
  spec: string;
  name: string;
  version: string | null;
  ok: boolean;
  venv: boolean;
  /** Its top-level import names (PIL for pillow). */
  modules: string[];
}

// Run by the host's python with -I -S: nothing of the new set runs on the host as root. The venv's
// site-packages never enters sys.path and no .pth file is processed (site would exec their import
// lines); its metadata is only read as files. The system's site-packages are appended for
// `packaging` alone, the requirement parser, which a wheel shipping a top-level `packaging` cannot shadow.
const PYTHON_PROBE = `
import json, os, site, sys
venv_site = os.path.realpath(sys.argv[1])
system_site = site.getsitepackages()
sys.path.extend(system_site)
try:
    from packaging.requirements import Requirement
except ImportError:
    from pip._vendor.packaging.requirements import Requirement
import importlib.metadata as md
search = [venv_site] + system_site
out = []
for spec in sys.argv[2:]:
    req = Requirement(spec)
    dist = next(iter(md.distributions(name=req.name, path=search)), None)
    if dist is None:
        version, where, top = None, "", []
    else:
        version, where = dist.version, os.path.realpath(str(dist.locate_file("")))
        top = (dist.read_text("top_level.txt") or "").split()
        if not top:
            top = sorted({f.parts[0][:-3] if f.parts[0].endswith(".py") else f.parts[0] for f in (dist.files or [])
                          if f.parts and f.parts[0] not in ("..", "__pycache__", "bin") and not f.parts[0].endswith((".dist-info", ".egg-info", ".pth"))})
    ok = version is not None and (not req.specifier or req.specifier.contains(version, prereleases=True))
    out.append({"spec": spec, "name": req.name, "version": version, "ok": ok, "venv": where == venv_site or where.startswith(venv_site + "/"), "modules": top})
print(json.dumps(out))
`;

/** The venv's site-packages directory (lib/pythonX.Y/site-packages). */
function venvSitePackages(venv: string): string {
  const lib = readdirSync(join(venv, "lib")).find((d) => d.startsWith("python"));
  if (lib === undefined) throw new SandgateError("SANDBOX_FAILED", `the venv ${venv} has no lib/python* directory`);
  return join(venv, "lib", lib, "site-packages");
}

async function probePython(hostPython: string, venv: string, specs: readonly string[]): Promise<ProbedPackage[]> {
  const result = await runInstaller([hostPython, "-I", "-S", "-c", PYTHON_PROBE, venvSitePackages(venv), ...specs], { timeoutMs: PROBE_TIMEOUT_MS });
  if (result.code !== 0) throw new SandgateError("SANDBOX_FAILED", `could not check the Python packages: ${failureReason(result)}`);
  return JSON.parse(result.stdout) as ProbedPackage[];
}

/** PyPI distributions whose Debian package is not python3-<name> (Debian names them after the module). */
const APT_NAMES: Record<string, string> = {
  pyyaml: "python3-yaml",
  "scikit-learn": "python3-sklearn",
  beautifulsoup4: "python3-bs4",
  pillow: "python3-pil",
  "opencv-python": "python3-opencv",
  "python-dateutil": "python3-dateutil",
  pyzmq: "python3-zmq",
  attrs: "python3-attr",
  torch: "python3-torch",
  "pyjwt": "python3-jwt",
  "pymysql": "python3-pymysql",
  "psycopg2-binary": "python3-psycopg2",
  "msgpack-python": "python3-msgpack",
};

/** Debian's package name for a PyPI distribution: python3-<lowercase name>, or the known exception. */
function aptName(spec: string): string {
  const name = pythonPackageName(spec);
  return APT_NAMES[name] ?? `python3-${name}`;
}

async function buildPython(staging: string, specs: readonly string[], interpreter: { path: string; version: string }, options: SyncOptions): Promise<Built> {
  const venv = await runInstaller([interpreter.path, "-m", "venv", "--system-site-packages", "--without-pip", staging], { env: installerEnv({}, options.env), timeoutMs: PROBE_TIMEOUT_MS, progress: options.progress });
  if (venv.code !== 0) {
    return { packages: [], failures: [{ spec: specs.join(", "), reason: `could not create a venv with ${interpreter.path}: ${failureReason(venv)} (on Debian/Ubuntu: apt-get install python3-venv)` }] };
  }
  const python = join(staging, "bin", "python3");
  let probed = await probePython(interpreter.path, staging, specs);
  for (const p of probed) if (p.ok) options.progress(`python: ${p.name} ${p.version ?? ""} is already installed on the system`);
  const fromApt = new Set<string>();
  let missing = probed.filter((p) => !p.ok);
  if (missing.length > 0 && options.apt) {
    if (process.getuid?.() !== 0 || !existsSync("/usr/bin/apt-get")) {
      return { packages: [], failures: missing.map((p) => ({ spec: p.spec, reason: "--apt needs root on a Debian/Ubuntu host (apt-get)" })) };
    }
    const names = missing.map((p) => aptName(p.spec));
    const aptEnv = installerEnv({ DEBIAN_FRONTEND: "noninteractive" }, options.env);
    options.progress("python: apt-get update");
    await runInstaller(["apt-get", "update", "-qq"], { env: aptEnv, timeoutMs: INSTALL_TIMEOUT_MS, progress: options.progress });
    options.progress(`python: apt-get install ${names.join(" ")}`);
    const apt = await runInstaller(["apt-get", "install", "-y", "--no-install-recommends", ...names], { env: aptEnv, timeoutMs: INSTALL_TIMEOUT_MS, progress: options.progress });
    if (apt.code !== 0) options.progress(`python: apt-get failed (${failureReason(apt)}); trying pip`);
    const before = new Set(missing.map((p) => p.spec));
    probed = await probePython(interpreter.path, staging, specs);
    for (const p of probed) if (p.ok && before.has(p.spec)) fromApt.add(p.spec);
    missing = probed.filter((p) => !p.ok);
  }
  if (missing.length > 0) {
    // Wheels only: building an sdist would run the package's own code on the host (as npm --ignore-scripts avoids).
    const pipArgs = ["--disable-pip-version-check", "--no-input", "--no-warn-script-location", "--only-binary", ":all:", "--retries", "0", "--timeout", "15"];
    for (const link of options.findLinks ?? []) pipArgs.push("--find-links", link);
    if (options.noIndex) pipArgs.push("--no-index");
    options.progress(`python: pip install ${missing.map((p) => p.spec).join(" ")}`);
    // The system's pip, installing into the venv (pip --python runs itself with the venv's interpreter).
    const pip = await runInstaller([interpreter.path, "-m", "pip", "--python", python, "install", ...pipArgs, ...missing.map((p) => p.spec)], {
      env: installerEnv({}, options.env),
      timeoutMs: INSTALL_TIMEOUT_MS,
      progress: options.progress,
    });
    if (pip.code !== 0) {
      const why = /No module named pip/.test(pip.stderr) ? "pip is not installed on the host (apt-get install python3-pip)" : failureReason(pip);
      const apt = missing.map((p) => aptName(p.spec)).join(" ");
      return {
        packages: [],
        failures: [
          {
            spec: missing.map((p) => p.spec).join(", "),
            reason: `pip could not install ${missing.length === 1 ? "it" : "them"} (${why}). No package index may be reachable from this host: on Debian/Ubuntu install ${apt} with apt-get and sync again (or run \`sandgate packages sync --apt\` as root), or give pip a directory of wheels with --find-links DIR`,
          },
        ],
      };
    }
    probed = await probePython(interpreter.path, staging, specs);
    const still = probed.filter((p) => !p.ok);
    if (still.length > 0) return { packages: [], failures: still.map((p) => ({ spec: p.spec, reason: `pip installed it but ${p.version === null ? "it is not found" : `version ${p.version} does not satisfy ${p.spec}`}` })) };
  }
  finishVenv(staging);
  const source = (p: ProbedPackage): PackageSource => (p.venv ? "venv" : fromApt.has(p.spec) ? "apt" : "system");
  return { packages: probed.map((p) => ({ name: pythonPackageName(p.spec), spec: p.spec, version: p.version, source: source(p), modules: p.modules })), failures: [] };
}

/**
 * Makes the venv usable where sandboxes see it: scripts' #! lines name /sandgate/packages/python,
 * the activate scripts (which name the host path) go, and `site-packages` at the top is the one
 * path the runner and PYTHONPATH use whatever the Python version.
 */
function finishVenv(staging: string): void {
  const bin = join(staging, "bin");
  for (const entry of readdirSync(bin, { withFileTypes: true })) {
    const path = join(bin, entry.name);
    if (/^activate|^Activate/.test(entry.name)) {
      rmSync(path, { force: true });
      continue;
    }
    if (!entry.isFile()) continue;
    const text = readFileSync(path);
    const shebang = `#!${staging}/bin/`;
    if (text.subarray(0, shebang.length).toString("utf8") === shebang) {
      writeFileSync(path, Buffer.concat([Buffer.from(`#!${SANDBOX_PACKAGES_DIR}/python/bin/`), text.subarray(shebang.length)]));
    }
  }
  const lib = readdirSync(join(staging, "lib")).find((d) => d.startsWith("python"));
  if (lib !== undefined) symlinkSync(join("lib", lib, "site-packages"), join(staging, "site-packages"));
}

/** npm next to the node binary sandboxes run, else the one on PATH. */
function npmFor(node: string): string {
  const beside = join(dirname(node), "npm");
  return existsSync(beside) ? beside : "npm";
}

async function buildNode(staging: string, specs: readonly string[], interpreter: { path: string; version: string }, options: SyncOptions): Promise<Built> {
  mkdirSync(staging, { recursive: true });
  writeFileSync(join(staging, "package.json"), `${JSON.stringify({ name: "sandgate-packages", private: true, description: "The admin's package set, built by sandgate packages sync" }, null, 2)}\n`);
  const host = options.env ?? process.env;
  const env = installerEnv({ PATH: `${dirname(interpreter.path)}:${host.PATH ?? "/usr/bin:/bin"}` }, host);
  const npm = await runInstaller(
    [npmFor(interpreter.path), "install", "--prefix", staging, "--no-audit", "--no-fund", "--ignore-scripts", "--omit=dev", "--no-update-notifier", "--fetch-retries=1", "--", ...specs],
    { env, cwd: staging, timeoutMs: INSTALL_TIMEOUT_MS, progress: options.progress },
  );
  if (npm.code !== 0) {
    const reason = failureReason(npm);
    return { packages: [], failures: specs.map((spec) => ({ spec, reason: `npm could not install the set (${reason}); check the name and that the registry is reachable` })) };
  }
  const packages: PackageManifest["packages"] = [];
  const failures: SyncOutcome["failures"] = [];
  for (const spec of specs) {
    const name = nodePackageName(spec);
    try {
      const pkg = JSON.parse(readFileSync(join(staging, "node_modules", name, "package.json"), "utf8")) as { version?: string };
      packages.push({ name, spec, version: pkg.version ?? null, source: "npm", modules: [name] });
    } catch {
      failures.push({ spec, reason: `npm finished but node_modules/${name} is missing` });
    }
  }
  return { packages, failures };
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The version directory the language's link names now, if any. */
function activeTarget(sandboxDir: string, language: PackageLanguage): string | undefined {
  try {
    return readlinkSync(activeLink(sandboxDir, language));
  } catch {
    return undefined;
  }
}

/** Points the language's link at `name` by renaming a new link over it (atomic for sandboxes starting meanwhile). */
function activate(root: string, language: PackageLanguage, name: string): void {
  const temporary = join(root, `.${language}.link-${process.pid}`);
  rmSync(temporary, { force: true });
  symlinkSync(name, temporary);
  renameSync(temporary, join(root, language));
}

/**
 * Removes the language's versions except `keep`: the new one and the one active before it, which
 * sandboxes started before this sync may still have mounted. Older ones are gone at the next sync.
 */
function prune(root: string, language: PackageLanguage, keep: Array<string | undefined>): void {
  for (const entry of readdirSync(root)) {
    if (!entry.startsWith(`${language}-`) || keep.includes(entry)) continue;
    rmSync(join(root, entry), { recursive: true, force: true });
  }
}

/** A lock without a readable pid (half-written by an older sandgate) counts as held for this long. */
const UNREADABLE_LOCK_MS = 60_000;

/**
 * One sync at a time per SANDBOX_DIR; a lock left by a process that died is taken over. The lock
 * appears with its pid already in it (a link to a file written first), so a sync started at the
 * same moment never reads it empty and takes it for a dead one's.
 */
function lock(root: string): () => void {
  const path = join(root, ".sync.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    const written = join(root, `.sync.lock.${process.pid}`);
    writeFileSync(written, String(process.pid), { mode: 0o644 });
    try {
      linkSync(written, path);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      rmSync(written, { force: true });
    }
    let holder: number;
    let ageMs: number;
    try {
      holder = Number(readFileSync(path, "utf8"));
      ageMs = Date.now() - statSync(path).mtimeMs;
    } catch {
      continue; // released meanwhile
    }
    const known = Number.isInteger(holder) && holder > 0;
    if (known ? alive(holder) : ageMs < UNREADABLE_LOCK_MS) {
      throw new SandgateError("CONFIG_INVALID", `another \`sandgate packages sync\` (${known ? `pid ${holder}` : "just started"}) is running on ${root}; wait for it`);
    }
    rmSync(path, { force: true });
  }
  throw new SandgateError("CONFIG_INVALID", `could not take the sync lock ${join(root, ".sync.lock")}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The active set of a language and whether it matches the config (for `packages list` and doctor). */
export async function packageSetState(
  config: SandgateConfig,
  language: PackageLanguage,
): Promise<{ configured: string[]; manifest: PackageManifest | undefined; dir: string | undefined; inSync: boolean }> {
  const configured = [...(language === "python" ? config.python.packages : config.node.packages)];
  const manifest = readActiveManifest(config.sandboxDir, language);
  const target = activeTarget(config.sandboxDir, language);
  const dir = target === undefined ? undefined : join(packagesRoot(config.sandboxDir), target);
  let inSync = configured.length === 0 && manifest === undefined;
  if (manifest !== undefined && configured.length > 0) {
    try {
      inSync = manifest.hash === setHash(language, configured, (await interpreterOf(config, language)).version);
    } catch {
      inSync = false;
    }
  }
  return { configured, manifest, dir, inSync };
}
