// The host-side runtime every sandbox shares: bwrap and interpreter paths, the synthetic /etc
// files, the seccomp program and cgroup support, prepared once per process.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SandgateError } from "../errors/index.js";
import { INTERPRETER_SPECS, INTERPRETERS, RUNNER_KINDS, RUNNER_SPECS, type Interpreter, type RunnerKind } from "../languages/index.js";
import { SANDBOX_GID, SANDBOX_HOSTNAME, SANDBOX_UID, type VolumeMount } from "./bwrap-args.js";
import { detectCgroups, removeStaleCgroups, retainCgroups, type CgroupSupport } from "./cgroups.js";
import { HIDDEN_USR_DIRS } from "./host-image.js";
import { INSTALL_SHIM_FILES, packagesRoot } from "./package-sets.js";
import { openRuntimeView, type RuntimeView } from "./runtime-view.js";
import { buildSeccompProgram } from "./seccomp.js";

export type { RunnerKind };

/** Where each interpreter is on this host (the sandbox sees the same paths). */
export type InterpreterPaths = Record<Interpreter, string>;

/** The unprivileged host identity sandboxes run as when sandgate itself runs as root. */
export interface HostUser {
  uid: number;
  gid: number;
}

export interface SandboxRuntime {
  bwrapPath: string;
  /**
   * Set when sandgate runs as root. bubblewrap then runs as this user, so that the sandbox's
   * uid maps to it on the host: mapped to root, code without capabilities would still pass
   * every owner check on root's files, /proc/sys included.
   */
  hostUser: HostUser | undefined;
  interpreters: InterpreterPaths;
  /** Host directory bound at /sandgate/runners. */
  runnersDir: string;
  /**
   * Closes its use of cgroups (the owner stops: Engine.close): the last runtime of the process to
   * close removes the cgroups kept for reuse. Safe to call twice.
   */
  closeCgroups(): Promise<void>;
  /** Each runner's entry file inside the sandbox: Python's is precompiled bytecode when it could be made. */
  runnerEntries: Record<RunnerKind, string>;
  etcDir: string;
  seccompFile: string | undefined;
  readOnlyPaths: string[];
  volumes: VolumeMount[];
  /** Host directory of generated tool wrappers, bound read-only at /sandgate/tools. */
  toolsDir: string | undefined;
  cgroups: CgroupSupport;
  workspacesDir: string;
  outputsDir: string;
  /** SANDBOX_DIR/packages: the admin's package sets; the active ones are looked up at each sandbox start. */
  packagesDir: string;
  /** Where the synthetic /etc, the runners and the tool channels live (runtime-view.ts); close() it at the end. */
  view: RuntimeView;
}

export interface RuntimeOptions {
  sandboxDir: string;
  useCgroups: boolean;
  /** Used only when running as root; see SandboxRuntime.hostUser. */
  hostUser?: HostUser;
  bwrap?: string;
  interpreters?: Partial<InterpreterPaths>;
  seccomp?: boolean;
  /** Host directories mounted at /mnt/<name> in every sandbox. */
  volumes?: VolumeMount[];
  /**
   * Host directory of generated tool wrappers (`manifest.json`, `python/servers/...`), bound
   * read-only at /sandgate/tools in every sandbox; created when missing. Replace files inside it
   * (write, then rename), never the directory itself, or running sandboxes keep the old one.
   */
  toolsDir?: string;
}

const RUNNERS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "runners");

function findExecutable(candidates: Array<string | undefined>): string | undefined {
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // try the next one
    }
  }
  return undefined;
}

/** The bubblewrap binary: the configured one only, when configured (a typo must not fall back silently). */
export function findBwrap(configured?: string): string | undefined {
  return findExecutable(configured ? [configured] : ["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"]);
}

/** Each interpreter found: the configured path only, when configured, else its spec's candidates in order. */
export function defaultInterpreters(overrides: Partial<InterpreterPaths> = {}): Partial<InterpreterPaths> {
  const found: Partial<InterpreterPaths> = {};
  for (const interpreter of INTERPRETERS) {
    const configured = overrides[interpreter];
    const path = findExecutable(configured ? [configured] : [...INTERPRETER_SPECS[interpreter].candidates]);
    if (path) found[interpreter] = path;
  }
  return found;
}

/** Install prefixes that are not under /usr (read-only with /usr/local, see host-image.ts) must be bound into the sandbox as well. */
function prefixesOutsideUsr(paths: string[]): string[] {
  const prefixes = new Set<string>();
  for (const path of paths) {
    const real = realpathSync(path);
    if (real.startsWith("/usr/") && !HIDDEN_USR_DIRS.some((dir) => real.startsWith(`${dir}/`))) continue;
    prefixes.add(dirname(dirname(real)));
  }
  return [...prefixes];
}

/** The runners' files, and the workspace file helper that every host runs (with Python; see fs-helper.ts). */
const RUNNER_FILES = [...RUNNER_KINDS.flatMap((kind) => RUNNER_SPECS[kind].files), "fs_helper.py", ...INSTALL_SHIM_FILES];
/** Runner files under bin/ run as commands inside the sandbox (it is on PATH). */
const isExecutableRunnerFile = (file: string): boolean => file.startsWith("bin/");

/**
 * Python compiles a script run by path on every start (about 4 ms of a 15 ms start); a copy of
 * the runners with the Python files as bytecode saves that on every sandbox. The copy is keyed
 * by the runners' content and the interpreter, so an upgrade of either makes a new one.
 */
function compiledRunners(runtimeDir: string, python: string): { dir: string } | undefined {
  const hash = createHash("sha256").update(python);
  for (const file of RUNNER_FILES) hash.update(readFileSync(join(RUNNERS_DIR, file)));
  const dir = join(runtimeDir, `runners-${hash.digest("hex").slice(0, 16)}`);
  const entry = { dir };
  if (RUNNER_FILES.every((file) => !file.endsWith(".py") || existsSync(join(dir, `${file}c`)))) return entry;
  const staging = `${dir}.tmp-${process.pid}`;
  try {
    mkdirSync(join(staging, "bin"), { recursive: true });
    for (const file of RUNNER_FILES.filter((name) => !name.endsWith(".py"))) {
      copyFileSync(join(RUNNERS_DIR, file), join(staging, file));
      chmodSync(join(staging, file), isExecutableRunnerFile(file) ? 0o755 : 0o644);
    }
    const script = "import py_compile, sys\nfor name in sys.argv[3:]:\n    py_compile.compile(f'{sys.argv[1]}/{name}.py', cfile=f'{sys.argv[2]}/{name}.pyc', dfile=f'/sandgate/runners/{name}.py', doraise=True)";
    const modules = RUNNER_FILES.filter((name) => name.endsWith(".py")).map((name) => name.slice(0, -".py".length));
    execFileSync(python, ["-I", "-S", "-c", script, RUNNERS_DIR, staging, ...modules], { stdio: "ignore", timeout: 30_000 });
    try {
      renameSync(staging, dir);
    } catch {
      // another sandgate process made the same copy first; theirs is as good as ours
    }
    return entry;
  } catch {
    return undefined;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The runners as sandboxes get them: a copy in the view when it is a tmpfs (a few files, copied once per process). */
function viewedRunners(view: RuntimeView, source: string): string {
  if (!view.hidden) return source;
  const dir = join(view.dir, "runners");
  rmSync(dir, { recursive: true, force: true });
  cpSync(source, dir, { recursive: true });
  return dir;
}

/** Each runner's entry (the first of its files) inside the sandbox; `.py` files are `.pyc` in a compiled copy. */
function runnerEntries(compiled: boolean): Record<RunnerKind, string> {
  const entries = {} as Record<RunnerKind, string>;
  for (const kind of RUNNER_KINDS) {
    const file = RUNNER_SPECS[kind].files[0];
    entries[kind] = `/sandgate/runners/${compiled && file.endsWith(".py") ? `${file}c` : file}`;
  }
  return entries;
}

/** Makes `path` the sandbox user's (a session workspace, files put into it by the host). */
export function giveToSandbox(runtime: SandboxRuntime, path: string): void {
  if (runtime.hostUser) chownSync(path, runtime.hostUser.uid, runtime.hostUser.gid);
}

/**
 * bubblewrap, running as the sandbox user, must reach what it mounts: every directory above
 * `path` needs search permission for that user. Says which directory blocks it.
 */
const MOVE_SANDBOX_DIR = "choose a SANDBOX_DIR outside it (the default for root is /var/lib/sandgate)";

function assertReachable(path: string, user: HostUser, what: string, fix = MOVE_SANDBOX_DIR): void {
  let dir = "/";
  for (const part of resolve(path).split("/").filter(Boolean)) {
    dir = join(dir, part);
    const st = statSync(dir);
    const bit = st.uid === user.uid ? 0o100 : st.gid === user.gid ? 0o010 : 0o001;
    if (!st.isDirectory() && dir === resolve(path)) return;
    if ((st.mode & bit) === 0) {
      throw new SandgateError(
        "SANDBOX_UNAVAILABLE",
        `the sandbox user (uid ${user.uid}) cannot reach ${what} ${path}: ${dir} is mode ${(st.mode & 0o777).toString(8)}; ${fix} or allow search there (chmod o+x)`,
      );
    }
  }
}

function writeEtc(etcDir: string): void {
  mkdirSync(etcDir, { recursive: true });
  writeFileSync(join(etcDir, "passwd"), `sandbox:x:${SANDBOX_UID}:${SANDBOX_GID}:sandgate sandbox:/workspace:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`);
  writeFileSync(join(etcDir, "group"), `sandbox:x:${SANDBOX_GID}:\nnogroup:x:65534:\n`);
  writeFileSync(join(etcDir, "hosts"), `127.0.0.1\tlocalhost ${SANDBOX_HOSTNAME}\n::1\tlocalhost ip6-localhost\n`);
  writeFileSync(join(etcDir, "hostname"), `${SANDBOX_HOSTNAME}\n`);
}

/**
 * Prepares the runtime, or throws SANDBOX_UNAVAILABLE with the fix when code cannot be
 * isolated here (no bubblewrap, no interpreter).
 */
export function prepareRuntime(options: RuntimeOptions): SandboxRuntime {
  const bwrapPath = findBwrap(options.bwrap);
  if (!bwrapPath) {
    throw new SandgateError(
      "SANDBOX_UNAVAILABLE",
      options.bwrap
        ? `bubblewrap was configured at ${options.bwrap} (SANDGATE_BWRAP) but is not an executable there, so code cannot be isolated`
        : "bubblewrap (bwrap) is not installed, so code cannot be isolated. Install it with `sudo apt-get install -y bubblewrap`, then run `sandgate doctor`.",
    );
  }
  const found = defaultInterpreters(options.interpreters);
  const missing = INTERPRETERS.filter((interpreter) => !found[interpreter]);
  if (missing.length > 0) {
    const specs = missing.map((interpreter) => INTERPRETER_SPECS[interpreter]);
    throw new SandgateError(
      "SANDBOX_UNAVAILABLE",
      `interpreter not found: ${missing.join(", ")} (install ${specs.map((s) => s.package).join(", ")}, or point ${specs.map((s) => s.env).join(", ")} at ${missing.length === 1 ? "it" : "them"})`,
    );
  }
  const interpreters = found as InterpreterPaths;
  const root = resolve(options.sandboxDir);
  const hostUser = process.getuid?.() === 0 ? (options.hostUser ?? { uid: 65534, gid: 65534 }) : undefined;
  const runtimeDir = join(root, "runtime");
  // Search-only for others: the sandbox user must pass through, nobody needs to list.
  for (const dir of [root, runtimeDir]) {
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o711);
  }
  let seccompFile: string | undefined;
  if (options.seccomp !== false) {
    const program = buildSeccompProgram();
    seccompFile = join(runtimeDir, "seccomp.bpf");
    writeFileSync(seccompFile, program);
  }
  const workspacesDir = join(root, "workspaces");
  const outputsDir = join(root, "outputs");
  mkdirSync(workspacesDir, { recursive: true });
  chmodSync(workspacesDir, 0o711);
  mkdirSync(outputsDir, { recursive: true, mode: 0o700 });
  if (!RUNNER_FILES.every((file) => existsSync(join(RUNNERS_DIR, file)))) {
    throw new SandgateError("SANDBOX_FAILED", `runner scripts are missing from ${RUNNERS_DIR}; reinstall sandgate`);
  }
  const readOnlyPaths = prefixesOutsideUsr(INTERPRETERS.map((interpreter) => interpreters[interpreter]));
  const compiled = compiledRunners(runtimeDir, interpreters.python);
  const entries = runnerEntries(compiled !== undefined);
  if (hostUser) {
    assertReachable(workspacesDir, hostUser, "the workspaces in");
    for (const path of readOnlyPaths) {
      const envNames = INTERPRETERS.map((interpreter) => INTERPRETER_SPECS[interpreter].env).join(", ");
      assertReachable(path, hostUser, "the interpreter installed in", `install the interpreter under /usr or /opt (${envNames})`);
    }
  }
  const volumes = options.volumes ?? [];
  for (const volume of volumes) {
    if (!existsSync(volume.hostPath) || !statSync(volume.hostPath).isDirectory()) {
      throw new SandgateError("CONFIG_INVALID", `volume ${volume.name}: host path ${volume.hostPath} is not a directory`, {
        data: { key: "volumes", volume: volume.name },
      });
    }
    if (hostUser) assertReachable(volume.hostPath, hostUser, `volume ${volume.name} in`);
  }
  let toolsDir: string | undefined;
  if (options.toolsDir !== undefined) {
    toolsDir = resolve(options.toolsDir);
    mkdirSync(toolsDir, { recursive: true, mode: 0o755 });
    if (!statSync(toolsDir).isDirectory()) {
      throw new SandgateError("CONFIG_INVALID", `the tools directory ${toolsDir} is not a directory`, { data: { key: "toolsDir" } });
    }
    if (hostUser) assertReachable(toolsDir, hostUser, "the generated tool wrappers in");
  }
  // Last of the checks above, so that a refused configuration leaves no mount behind.
  const view = openRuntimeView(runtimeDir);
  // The host etc image and the tool channels are made next to etcDir (host-etc-image.ts, sandbox-launch.ts).
  const etcDir = join(view.dir, "etc");
  writeEtc(etcDir);
  const runnersDir = viewedRunners(view, compiled?.dir ?? RUNNERS_DIR);
  if (hostUser) {
    assertReachable(runnersDir, hostUser, "the runner scripts in");
    assertReachable(etcDir, hostUser, "the sandbox /etc files in");
  }
  const cgroups: CgroupSupport = options.useCgroups
    ? detectCgroups()
    : { mode: "none", controllers: [], parents: {}, reason: "disabled by configuration (SANDGATE_CGROUPS=off)" };
  if (cgroups.mode !== "none") removeStaleCgroups(cgroups);
  const closeCgroups = cgroups.mode === "none" ? async () => undefined : retainCgroups();
  return {
    bwrapPath,
    interpreters,
    runnersDir,
    closeCgroups,
    hostUser,
    runnerEntries: entries,
    etcDir,
    seccompFile,
    readOnlyPaths,
    volumes,
    toolsDir,
    cgroups,
    workspacesDir,
    outputsDir,
    packagesDir: packagesRoot(root),
    view,
  };
}
