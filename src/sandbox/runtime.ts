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
import { SANDBOX_GID, SANDBOX_HOSTNAME, SANDBOX_UID, type VolumeMount } from "./bwrap-args.js";
import { detectCgroups, removeStaleCgroups, type CgroupSupport } from "./cgroups.js";
import { buildSeccompProgram } from "./seccomp.js";

export type RunnerKind = "python" | "javascript" | "bash";

export interface InterpreterPaths {
  python: string;
  node: string;
  bash: string;
}

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
  /** The Python runner's entry inside the sandbox: precompiled bytecode when it could be made. */
  pythonEntry: string;
  etcDir: string;
  seccompFile: string | undefined;
  readOnlyPaths: string[];
  volumes: VolumeMount[];
  /** Host directory of generated tool wrappers, bound read-only at /sandgate/tools. */
  toolsDir: string | undefined;
  cgroups: CgroupSupport;
  workspacesDir: string;
  outputsDir: string;
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

export function defaultInterpreters(overrides: Partial<InterpreterPaths> = {}): Partial<InterpreterPaths> {
  const found: Partial<InterpreterPaths> = {};
  const pick = (configured: string | undefined, defaults: string[]): string | undefined => findExecutable(configured ? [configured] : defaults);
  const python = pick(overrides.python, ["/usr/bin/python3"]);
  const node = pick(overrides.node, ["/usr/bin/node", process.execPath]);
  const bash = pick(overrides.bash, ["/usr/bin/bash", "/bin/bash"]);
  if (python) found.python = python;
  if (node) found.node = node;
  if (bash) found.bash = bash;
  return found;
}

/** Install prefixes that are not under /usr must be bound into the sandbox as well. */
function prefixesOutsideUsr(paths: string[]): string[] {
  const prefixes = new Set<string>();
  for (const path of paths) {
    const real = realpathSync(path);
    if (real.startsWith("/usr/") && !real.startsWith("/usr/local/")) continue;
    prefixes.add(dirname(dirname(real)));
  }
  return [...prefixes];
}

const RUNNER_FILES = ["python_runner.py", "sandgate_frames.py", "sandgate.py", "fs_helper.py", "node_runner.cjs", "node_code_mode.cjs", "bash_lib.sh", "bin/sandgate-tool"];
/** Runner files that run as commands inside the sandbox. */
const EXECUTABLE_RUNNER_FILES = new Set(["bin/sandgate-tool"]);

/**
 * Python compiles a script run by path on every start (about 4 ms of a 15 ms start); a copy of
 * the runners with the Python files as bytecode saves that on every sandbox. The copy is keyed
 * by the runners' content and the interpreter, so an upgrade of either makes a new one.
 */
function compiledRunners(runtimeDir: string, python: string): { dir: string; pythonEntry: string } | undefined {
  const hash = createHash("sha256").update(python);
  for (const file of RUNNER_FILES) hash.update(readFileSync(join(RUNNERS_DIR, file)));
  const dir = join(runtimeDir, `runners-${hash.digest("hex").slice(0, 16)}`);
  const entry = { dir, pythonEntry: "/sandgate/runners/python_runner.pyc" };
  if (existsSync(join(dir, "python_runner.pyc"))) return entry;
  const staging = `${dir}.tmp-${process.pid}`;
  try {
    mkdirSync(join(staging, "bin"), { recursive: true });
    for (const file of RUNNER_FILES.filter((name) => !name.endsWith(".py"))) {
      copyFileSync(join(RUNNERS_DIR, file), join(staging, file));
      chmodSync(join(staging, file), EXECUTABLE_RUNNER_FILES.has(file) ? 0o755 : 0o644);
    }
    const script = "import py_compile, sys\nfor name in sys.argv[3:]:\n    py_compile.compile(f'{sys.argv[1]}/{name}.py', cfile=f'{sys.argv[2]}/{name}.pyc', dfile=f'/sandgate/runners/{name}.py', doraise=True)";
    execFileSync(python, ["-I", "-S", "-c", script, RUNNERS_DIR, staging, "sandgate_frames", "sandgate", "python_runner", "fs_helper"], { stdio: "ignore", timeout: 30_000 });
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
  const missing = (["python", "node", "bash"] as const).filter((k) => !found[k]);
  if (missing.length > 0) {
    throw new SandgateError(
      "SANDBOX_UNAVAILABLE",
      `interpreter not found: ${missing.join(", ")} (install python3, nodejs and bash, or point SANDGATE_PYTHON, SANDGATE_NODE, SANDGATE_BASH at them)`,
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
  const etcDir = join(runtimeDir, "etc");
  writeEtc(etcDir);
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
  const readOnlyPaths = prefixesOutsideUsr([interpreters.python, interpreters.node, interpreters.bash]);
  const compiled = compiledRunners(runtimeDir, interpreters.python);
  const runnersDir = compiled?.dir ?? RUNNERS_DIR;
  if (hostUser) {
    assertReachable(workspacesDir, hostUser, "the workspaces in");
    assertReachable(runnersDir, hostUser, "the runner scripts in");
    assertReachable(etcDir, hostUser, "the sandbox /etc files in");
    for (const path of readOnlyPaths) {
      assertReachable(path, hostUser, "the interpreter installed in", "install the interpreter under /usr or /opt (SANDGATE_PYTHON, SANDGATE_NODE, SANDGATE_BASH)");
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
  const cgroups: CgroupSupport = options.useCgroups
    ? detectCgroups()
    : { mode: "none", controllers: [], parents: {}, reason: "disabled by configuration (SANDGATE_CGROUPS=off)" };
  if (cgroups.mode !== "none") removeStaleCgroups(cgroups);
  return {
    bwrapPath,
    interpreters,
    runnersDir,
    hostUser,
    pythonEntry: compiled?.pythonEntry ?? "/sandgate/runners/python_runner.py",
    etcDir,
    seccompFile,
    readOnlyPaths,
    volumes,
    toolsDir,
    cgroups,
    workspacesDir,
    outputsDir,
  };
}
