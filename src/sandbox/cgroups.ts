// Per-sandbox cgroups: detection of what the host lets us use (v2, or v1 memory/pids/cpu, and
// the freezer), creation with limits, freezing between calls, usage read-back and removal.

import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, rmdirSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * How long a sandbox (or a session's machine) idles after a call before it is frozen: a call that
 * follows sooner, as in a loop of calls, pays neither the freeze nor the thaw (each a synchronous
 * cgroup write of about 0.2 ms), and what a call left running gets at most this much CPU after it.
 */
export const FREEZE_AFTER_IDLE_MS = 20;

export type CgroupMode = "v2" | "v1" | "none";

export interface CgroupSupport {
  mode: CgroupMode;
  /** Controllers sandgate can limit with (memory, pids, cpu). */
  controllers: string[];
  /** Why cgroups are not (fully) usable, for `sandgate doctor`. */
  reason?: string;
  /** Parent directory per controller (v1) or the single parent (v2, key "unified"). */
  parents: Record<string, string>;
  /** A sandbox's processes can be frozen between calls (v1 freezer controller, v2 cgroup.freeze). */
  freezer?: boolean;
}

export interface CgroupLimits {
  memoryBytes: number;
  pids: number;
  cpus: number;
}

const CGROUP_ROOT = "/sys/fs/cgroup";
const PARENT_NAME = "sandgate";
const V1_CONTROLLERS = ["memory", "pids", "cpu"] as const;
const CPU_PERIOD_US = 100_000;

let cached: CgroupSupport | undefined;

function ownPaths(): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
    const [, controllers, path] = line.split(":");
    if (controllers === undefined || path === undefined) continue;
    for (const c of controllers === "" ? [""] : controllers.split(",")) paths.set(c, path);
  }
  return paths;
}

function v1Mounts(): Map<string, string> {
  const mounts = new Map<string, string>();
  for (const line of readFileSync("/proc/self/mounts", "utf8").split("\n")) {
    const [, dir, type, options] = line.split(" ");
    if (type !== "cgroup" || dir === undefined || options === undefined) continue;
    for (const option of options.split(",")) mounts.set(option, dir);
  }
  return mounts;
}

function probeWritable(parent: string): string | undefined {
  try {
    mkdirSync(parent, { recursive: true });
    const probe = join(parent, `probe-${process.pid}`);
    mkdirSync(probe);
    rmdirSync(probe);
    return undefined;
  } catch (error) {
    return `${parent}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
  }
}

function detectV2(): CgroupSupport | undefined {
  if (!existsSync(join(CGROUP_ROOT, "cgroup.controllers")) || existsSync(join(CGROUP_ROOT, "memory"))) return undefined;
  const own = ownPaths().get("") ?? "/";
  const base = join(CGROUP_ROOT, own);
  const parent = join(base, PARENT_NAME);
  const failure = probeWritable(parent);
  if (failure) return { mode: "none", controllers: [], parents: {}, reason: `cgroup v2 is not writable (${failure})` };
  const wantedAll = ["memory", "pids", "cpu"];
  try {
    // Delegation needs the controllers enabled one level up; this fails (harmlessly) when the
    // level above holds processes itself, and then only what is already delegated is used.
    writeFileSync(join(base, "cgroup.subtree_control"), wantedAll.map((c) => `+${c}`).join(" "));
  } catch {
    // keep whatever the parent already delegates
  }
  const available = readFileSync(join(parent, "cgroup.controllers"), "utf8").trim().split(/\s+/);
  const wanted = wantedAll.filter((c) => available.includes(c));
  if (!wanted.includes("memory") || !wanted.includes("pids")) {
    return {
      mode: "none",
      controllers: [],
      parents: {},
      reason: `cgroup v2 does not delegate the memory and pids controllers to ${parent} (available: ${available.join(" ") || "none"}); run sandgate in a cgroup of its own with delegation (systemd: Delegate=yes)`,
    };
  }
  try {
    writeFileSync(join(parent, "cgroup.subtree_control"), wanted.map((c) => `+${c}`).join(" "));
  } catch (error) {
    return { mode: "none", controllers: [], parents: {}, reason: `cannot enable cgroup v2 controllers in ${parent}: ${String(error)}` };
  }
  return { mode: "v2", controllers: wanted, parents: { unified: parent }, freezer: existsSync(join(parent, "cgroup.freeze")) };
}

function detectV1(): CgroupSupport {
  const mounts = v1Mounts();
  const own = ownPaths();
  const parents: Record<string, string> = {};
  const problems: string[] = [];
  for (const controller of V1_CONTROLLERS) {
    const mount = mounts.get(controller);
    if (!mount) {
      problems.push(`${controller}: not mounted`);
      continue;
    }
    const parent = join(mount, own.get(controller) ?? "/", PARENT_NAME);
    const failure = probeWritable(parent);
    if (failure) problems.push(failure);
    else parents[controller] = parent;
  }
  const controllers = ["memory", "pids", "cpu"].filter((c) => parents[c] !== undefined);
  if (controllers.length === 0) return { mode: "none", controllers, parents: {}, reason: problems.join("; ") || "no cgroup controllers" };
  // The freezer limits nothing, so its absence is no problem to report; it only stops idle sessions.
  const freezerMount = mounts.get("freezer");
  const freezerParent = freezerMount ? join(freezerMount, own.get("freezer") ?? "/", PARENT_NAME) : undefined;
  const freezer = freezerParent !== undefined && probeWritable(freezerParent) === undefined;
  if (freezer) parents.freezer = freezerParent;
  const support: CgroupSupport = { mode: "v1", controllers, parents, freezer };
  if (problems.length > 0) support.reason = problems.join("; ");
  return support;
}

/** What this host lets sandgate do with cgroups; computed once per process. */
export function detectCgroups(): CgroupSupport {
  if (cached) return cached;
  try {
    cached = detectV2() ?? detectV1();
  } catch (error) {
    cached = { mode: "none", controllers: [], parents: {}, reason: `cannot read cgroup information: ${String(error)}` };
  }
  return cached;
}

let counter = 0;
/** Tells this module's cgroups from those of another copy loaded in the same process (a test runner reloads modules per file). */
const instanceTag = Math.random().toString(36).slice(2, 8);
const MAX_IDLE_CGROUPS = 16;
const idleCgroups = new Map<CgroupSupport, SandboxCgroup[]>();
/**
 * Runtimes of this process that use cgroups and are not closed (retainCgroups and the function it returns): idle
 * cgroups are kept for them, and removed when the last closes; one released with none open is removed.
 */
let openRuntimes = 0;

/** The number on the line `key N` of a cgroup's flat keyed file, 0 without one. */
function numberAfter(text: string, key: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${key} `));
  return line ? Number(line.slice(key.length + 1)) || 0 : 0;
}

/** memory.events and memory.oom_control are a few short lines; one buffer serves every read (they are synchronous). */
const OOM_READ_BUFFER = Buffer.alloc(1024);

/**
 * The cgroup(s) of one sandbox. The host moves the sandbox's processes in (adopt) while
 * bubblewrap sets up, and checks that all of them are inside before any code runs (missing).
 */
export class SandboxCgroup {
  private constructor(
    private readonly support: CgroupSupport,
    private readonly dirs: Record<string, string>,
  ) {}

  private limitsKey = "";
  /** The open OOM counter file (see oomKills); closed when the cgroup goes idle or is removed. */
  private oomFd: number | undefined;

  static create(support: CgroupSupport, limits: CgroupLimits): SandboxCgroup | undefined {
    if (support.mode === "none") return undefined;
    const reused = idleCgroups.get(support)?.pop();
    if (reused) {
      reused.applyLimits(limits);
      return reused;
    }
    const name = `sg-${process.pid}-${instanceTag}-${++counter}`;
    const dirs: Record<string, string> = {};
    const cgroup = new SandboxCgroup(support, dirs);
    try {
      for (const [controller, parent] of Object.entries(support.parents)) {
        const dir = join(parent, name);
        mkdirSync(dir);
        dirs[controller] = dir;
      }
      cgroup.applyLimits(limits);
    } catch (error) {
      cgroup.destroySync();
      throw error;
    }
    return cgroup;
  }

  private applyLimits(limits: CgroupLimits): void {
    const key = `${limits.memoryBytes}/${limits.pids}/${limits.cpus}`;
    if (key === this.limitsKey) return;
    this.limitsKey = key;
    const quota = Math.max(1000, Math.round(limits.cpus * CPU_PERIOD_US));
    if (this.support.mode === "v2") {
      const dir = this.dirs.unified!;
      if (this.support.controllers.includes("memory")) {
        writeFileSync(join(dir, "memory.max"), String(limits.memoryBytes));
        try {
          writeFileSync(join(dir, "memory.swap.max"), "0");
        } catch {
          // no swap accounting on this host: nothing to limit
        }
      }
      if (this.support.controllers.includes("pids")) writeFileSync(join(dir, "pids.max"), String(limits.pids));
      if (this.support.controllers.includes("cpu")) writeFileSync(join(dir, "cpu.max"), `${quota} ${CPU_PERIOD_US}`);
      return;
    }
    if (this.dirs.memory) {
      // v1 insists on memory <= memory+swap at every step: raising needs memsw first, lowering
      // needs it last. Writing it on both sides works either way (and without swap accounting).
      const memsw = join(this.dirs.memory, "memory.memsw.limit_in_bytes");
      const trySwap = (): void => {
        try {
          writeFileSync(memsw, String(limits.memoryBytes));
        } catch {
          // swap accounting off, or the order was the other way round: the second try sets it
        }
      };
      trySwap();
      writeFileSync(join(this.dirs.memory, "memory.limit_in_bytes"), String(limits.memoryBytes));
      trySwap();
    }
    if (this.dirs.pids) writeFileSync(join(this.dirs.pids, "pids.max"), String(limits.pids));
    if (this.dirs.cpu) {
      writeFileSync(join(this.dirs.cpu, "cpu.cfs_period_us"), String(CPU_PERIOD_US));
      writeFileSync(join(this.dirs.cpu, "cpu.cfs_quota_us"), String(quota));
    }
  }

  /**
   * Moves processes (whole thread groups) into every controller's cgroup. The first move after
   * a quiet spell waits for an RCU grace period in the kernel, so this runs off the event loop
   * and overlaps with the sandbox's own start-up.
   */
  async adopt(pids: number[]): Promise<void> {
    for (const dir of Object.values(this.dirs)) {
      for (const pid of pids) await writeFile(join(dir, "cgroup.procs"), String(pid));
    }
  }

  /** Of `pids`, those not yet inside every controller's cgroup. */
  missing(pids: number[]): number[] {
    const out = new Set<number>();
    for (const dir of Object.values(this.dirs)) {
      let inside: Set<number>;
      try {
        inside = new Set(readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number));
      } catch {
        inside = new Set();
      }
      for (const pid of pids) if (!inside.has(pid)) out.add(pid);
    }
    return [...out];
  }

  /**
   * OOM kills so far, read at every call's start and end: the counter file stays open, so each
   * read is one pread of a few dozen bytes (opening a cgroup file costs several times that).
   */
  oomKills(): number {
    const dir = this.support.mode === "v2" ? this.dirs.unified : this.dirs.memory;
    if (dir === undefined) return 0;
    try {
      this.oomFd ??= openSync(join(dir, this.support.mode === "v2" ? "memory.events" : "memory.oom_control"), "r");
      const length = readSync(this.oomFd, OOM_READ_BUFFER, 0, OOM_READ_BUFFER.length, 0);
      return numberAfter(OOM_READ_BUFFER.toString("latin1", 0, length), "oom_kill");
    } catch {
      return 0;
    }
  }

  private closeOomFd(): void {
    if (this.oomFd === undefined) return;
    closeSync(this.oomFd);
    this.oomFd = undefined;
  }

  /** Host pids still inside this sandbox's cgroup. */
  pids(): number[] {
    const dir = this.dirs.unified ?? this.dirs.pids ?? this.dirs.memory;
    if (!dir) return [];
    try {
      return readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
    } catch {
      return [];
    }
  }

  /**
   * Stops every process of the sandbox where it is (between calls: a thread or timer a call left
   * running then costs no CPU and writes nothing). Returns false when freezing is not available.
   */
  freeze(): boolean {
    return this.setFrozen(true);
  }

  thaw(): boolean {
    return this.setFrozen(false);
  }

  private setFrozen(frozen: boolean): boolean {
    if (!this.support.freezer) return false;
    try {
      if (this.dirs.unified) writeFileSync(join(this.dirs.unified, "cgroup.freeze"), frozen ? "1" : "0");
      else if (this.dirs.freezer) writeFileSync(join(this.dirs.freezer, "freezer.state"), frozen ? "FROZEN" : "THAWED");
      else return false;
      return true;
    } catch {
      return false;
    }
  }


  /** SIGKILLs every process in the cgroup: the backstop when bwrap's own teardown is not enough. */
  killAll(): void {
    // A frozen task keeps a SIGKILL pending (cgroup v1) until it is thawed: thaw first.
    this.thaw();
    if (this.dirs.unified) {
      try {
        writeFileSync(join(this.dirs.unified, "cgroup.kill"), "1");
        return;
      } catch {
        // cgroup.kill needs Linux 5.14; fall back to signalling each pid
      }
    }
    for (const pid of this.pids()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }

  /**
   * Gives the cgroup back once every process in it is gone. It is kept for the next sandbox
   * rather than removed: creating and removing a memory cgroup costs the kernel several ms of
   * CPU, a fifth of a whole sandbox's start. Counters that matter are read as differences.
   */
  async release(): Promise<void> {
    for (let attempt = 0; attempt < 200 && !this.empty(); attempt++) {
      this.killAll();
      await new Promise((resolve) => setTimeout(resolve, attempt < 10 ? 2 : 50));
    }
    const idle = idleCgroups.get(this.support) ?? [];
    idleCgroups.set(this.support, idle);
    if (this.empty() && openRuntimes > 0 && idle.length < MAX_IDLE_CGROUPS) {
      // An idle cgroup holds no fd: what is open is bounded by the sandboxes alive, and nothing
      // a late reader opens outlives the next user's release (one open per sandbox, not per call).
      this.closeOomFd();
      idle.push(this);
    } else await this.destroy();
  }

  private empty(): boolean {
    for (const dir of Object.values(this.dirs)) {
      try {
        if (readFileSync(join(dir, "cgroup.procs"), "utf8").trim() !== "") return false;
      } catch {
        // removed under us: nothing inside
      }
    }
    return true;
  }

  /** Removes the cgroup directories once their processes are gone; retries while the kernel releases them. */
  async destroy(): Promise<void> {
    for (let attempt = 0; attempt < 200; attempt++) {
      if (this.destroySync()) return;
      this.killAll();
      await new Promise((resolve) => setTimeout(resolve, attempt < 10 ? 5 : 50));
    }
  }

  private destroySync(): boolean {
    this.closeOomFd();
    let done = true;
    for (const [controller, dir] of Object.entries(this.dirs)) {
      try {
        rmdirSync(dir);
        delete this.dirs[controller];
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") delete this.dirs[controller];
        else done = false;
      }
    }
    return done;
  }
}

/**
 * A runtime that starts sandboxes in cgroups opens (prepareRuntime); the function returned closes
 * it (Engine.close, a library's own runtime; a second call does nothing). When the last open one
 * closes, the cgroups kept for reuse are removed, and a sandbox released after that has its cgroup
 * removed at once, so nothing is left on the host while the process lives on.
 */
export function retainCgroups(): () => Promise<void> {
  openRuntimes += 1;
  let closed = false;
  return async () => {
    if (closed) return;
    closed = true;
    if (--openRuntimes > 0) return;
    const all = [...idleCgroups.values()].flatMap((list) => list.splice(0));
    await Promise.all(all.map((cgroup) => cgroup.destroy()));
  };
}

/**
 * The pid of the sandgate process that named a cgroup `name` (`sg-<pid>-<n>`, or `sg-<pid>-<tag>-<n>`
 * since names carry their module's tag); undefined for a cgroup that is not sandgate's.
 */
export function ownerPidOfCgroup(name: string): number | undefined {
  const match = /^sg-(\d+)-(?:[a-z0-9]+-)?\d+$/.exec(name);
  return match ? Number(match[1]) : undefined;
}

/** Removes cgroups left behind by sandgate processes that no longer exist (a crash, a kill -9). */
export function removeStaleCgroups(support: CgroupSupport): number {
  let removed = 0;
  for (const parent of Object.values(support.parents)) {
    let entries: string[];
    try {
      entries = readdirSync(parent);
    } catch {
      continue;
    }
    for (const entry of entries) {
      const owner = ownerPidOfCgroup(entry);
      if (owner === undefined || existsSync(`/proc/${owner}`)) continue;
      const dir = join(parent, entry);
      for (const [file, value] of [["freezer.state", "THAWED"], ["cgroup.freeze", "0"]] as const) {
        try {
          // A sandbox left frozen would never act on the SIGKILL below.
          if (existsSync(join(dir, file))) writeFileSync(join(dir, file), value);
        } catch {
          // not a freezer cgroup
        }
      }
      try {
        for (const pid of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean)) {
          try {
            process.kill(Number(pid), "SIGKILL");
          } catch {
            // gone already
          }
        }
        rmdirSync(dir);
        removed++;
      } catch {
        // busy: a later start will retry
      }
    }
  }
  return removed;
}

/**
 * The freezing between calls of one cgroup: frozen FREEZE_AFTER_IDLE_MS after it went idle, if it is
 * still idle then, unless a thaw came first. Where the host cannot freeze, it stays thawed.
 */
export class IdleFreezer {
  private timer: NodeJS.Timeout | undefined;
  private frozen = false;
  /** When the cgroup last went idle; undefined while a call runs. */
  private idleSince: number | undefined;
  private stillIdle: () => boolean = () => false;

  constructor(private readonly cgroup: SandboxCgroup | undefined) {}

  get isFrozen(): boolean {
    return this.frozen;
  }

  /**
   * Freezes shortly, if `stillIdle()` holds by then. A loop of calls pays a timestamp per call, not
   * a timer: the one timer armed re-arms itself for what is left of the idle spell when it fires.
   */
  schedule(stillIdle: () => boolean): void {
    if (this.frozen || this.cgroup === undefined) return;
    this.stillIdle = stillIdle;
    this.idleSince = performance.now();
    if (this.timer === undefined) this.arm(FREEZE_AFTER_IDLE_MS);
  }

  /** Thaws now (a run, a kill or an interrupt must find the processes running); a freeze not yet made is dropped. */
  thaw(): void {
    this.idleSince = undefined;
    if (!this.frozen) return;
    this.frozen = false;
    this.cgroup?.thaw();
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.due(), ms);
    this.timer.unref();
  }

  private due(): void {
    this.timer = undefined;
    if (this.idleSince === undefined || this.frozen) return;
    const left = this.idleSince + FREEZE_AFTER_IDLE_MS - performance.now();
    if (left > 0) this.arm(left);
    else if (this.stillIdle() && this.cgroup?.freeze()) this.frozen = true;
  }
}
