// The tool pipe as two named pipes (FIFOs) per sandbox, bound into it at a fixed path: sandgate-tool opens
// them by path, so it works from programs that closed the fds they inherited (Python's subprocess, Node's execFileSync).

import { execFile, execFileSync } from "node:child_process";
import { chmodSync, chownSync, closeSync, constants, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync } from "node:fs";
import { Socket } from "node:net";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { SandgateError } from "../../errors/index.js";
import type { HostUser } from "../runtime.js";

/** Where the sandbox sees them; runners/bin/sandgate-tool opens these paths. */
export const TOOL_REQUESTS_PATH = "/sandgate/channel/tool-requests";
export const TOOL_REPLIES_PATH = "/sandgate/channel/tool-replies";

export interface ToolFifos {
  /** Host paths of the two FIFOs, for the bind mounts. */
  requestsPath: string;
  repliesPath: string;
  /** The host's ends as streams: requests come in, replies go out. Neither ever sees EOF: the host holds both sides. */
  requests: Socket;
  replies: Socket;
  /** Destroys the host's streams and removes the FIFOs (the sandbox is gone). */
  dispose(): void;
}

/**
 * FIFO pairs made ahead, per parent directory: Node has no mkfifo, and coreutils' costs a process,
 * whose spawn holds the event loop until it has exec'd. One `mkfifo` makes a whole batch, started
 * when the stock falls below the low mark, so a sandbox start costs a small share of one spawn.
 */
const STOCK_LOW = 4;
const STOCK_BATCH = 16;
/** Directories left by a sandgate that stopped without cleaning up are removed after this long. */
const STALE_MS = 10 * 60_000;

/**
 * Pairs of FIFOs made ahead by `mkfifo` run in the background, so a sandbox start does not wait for a
 * process (when the stock is empty it makes its pair at once). Mode 0600, owned by the sandbox's host user.
 */
class FifoStock {
  private readonly ready: string[] = [];
  private making = 0;
  /** Directories made ahead and not taken (ready or still being made): removed when the process exits. */
  private readonly spare = new Set<string>();

  constructor(
    private readonly parent: string,
    private readonly hostUser: HostUser | undefined,
  ) {
    mkdirSync(parent, { recursive: true, mode: 0o711 });
    // A sandbox bound its FIFOs when it started: removing the host paths leaves its mounts and the host's fds working.
    // Another sandgate process may remove its own entries meanwhile (a sandbox closed, an exit): gone is fine.
    for (const name of readdirSync(parent)) {
      const path = join(parent, name);
      const stat = name.startsWith("tool-") ? lstatSync(path, { throwIfNoEntry: false }) : undefined;
      if (stat !== undefined && Date.now() - stat.mtimeMs > STALE_MS) rmSync(path, { recursive: true, force: true });
    }
  }

  /** A directory holding `requests` and `replies`, now the caller's. */
  take(): string {
    let dir = this.ready.shift();
    while (dir !== undefined && !(existsSync(join(dir, "requests")) && existsSync(join(dir, "replies")))) {
      this.spare.delete(dir);
      dir = this.ready.shift();
    }
    if (dir !== undefined) this.spare.delete(dir);
    this.refill();
    if (dir !== undefined) return dir;
    let made: string;
    try {
      made = this.newDir();
    } catch (error) {
      throw unmade(error);
    }
    try {
      execFileSync("mkfifo", ["-m", "0600", ...pairIn(made)], { stdio: "ignore", timeout: 10_000 });
      this.own(made);
    } catch (error) {
      rmSync(made, { recursive: true, force: true });
      throw unmade(error);
    }
    return made;
  }

  /** Makes a batch of pairs ahead once the stock runs low; where no directory can be made (a full disk), the next take tries again. */
  private refill(): void {
    if (this.ready.length + this.making >= STOCK_LOW) return;
    const dirs: string[] = [];
    for (let i = 0; i < STOCK_BATCH; i++) {
      try {
        dirs.push(this.newDir());
      } catch {
        break;
      }
    }
    if (dirs.length === 0) return;
    this.making += dirs.length;
    for (const dir of dirs) this.spare.add(dir);
    execFile("mkfifo", ["-m", "0600", ...dirs.flatMap(pairIn)], { timeout: 10_000 }, (error) => {
      this.making -= dirs.length;
      for (const dir of dirs) {
        try {
          // One failed path fails the batch's exit status: each pair is checked on its own.
          if ((error === null || pairMade(dir))) {
            this.own(dir);
            this.ready.push(dir);
            continue;
          }
        } catch {
          // not owned: dropped below
        }
        this.spare.delete(dir);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  /** Removes the pairs made ahead that no sandbox took (a short-lived `sandgate exec` would leave them for the next sweep). */
  removeSpares(): void {
    for (const dir of this.spare) rmSync(dir, { recursive: true, force: true });
    this.spare.clear();
    this.ready.length = 0;
  }

  private newDir(): string {
    const dir = mkdtempSync(join(this.parent, "tool-"));
    chmodSync(dir, 0o711);
    return dir;
  }

  private own(dir: string): void {
    if (this.hostUser) for (const path of pairIn(dir)) chownSync(path, this.hostUser.uid, this.hostUser.gid);
  }
}

/** A start that found no pair made ahead and could not make one: the disk of SANDBOX_DIR is full, most likely. */
function unmade(error: unknown): SandgateError {
  const code = (error as NodeJS.ErrnoException).code;
  const why = typeof code === "string" ? code : "mkfifo failed";
  return new SandgateError("SANDBOX_FAILED", `could not make the tool FIFOs of a new sandbox (${why}): free space and inodes on the disk of SANDBOX_DIR`, { cause: error });
}

/** Both FIFOs of `dir` exist as FIFOs (made by a batch whose other paths may have failed). */
function pairMade(dir: string): boolean {
  return pairIn(dir).every((path) => lstatSync(path, { throwIfNoEntry: false })?.isFIFO() === true);
}

function pairIn(dir: string): [string, string] {
  return [join(dir, "requests"), join(dir, "replies")];
}

const stocks = new Map<string, FifoStock>();
let removeOnExit = false;
/** Directories of closed sandboxes being removed off the event loop; what is left at exit goes then. */
const removing = new Set<string>();

function removeLater(dir: string): void {
  removing.add(dir);
  void rm(dir, { recursive: true, force: true })
    .catch(() => undefined)
    .finally(() => removing.delete(dir));
}

/**
 * The FIFO pair for one sandbox, in a directory of its own under `parent`: mode 0600, owned by the
 * sandbox's host user, so only this sandbox (the only place they are bound) and the host open them.
 */
export function createToolFifos(parent: string, hostUser: HostUser | undefined): ToolFifos {
  let stock = stocks.get(parent);
  if (stock === undefined) {
    stock = new FifoStock(parent, hostUser);
    stocks.set(parent, stock);
    if (!removeOnExit) {
      removeOnExit = true;
      process.once("exit", () => {
        for (const each of stocks.values()) each.removeSpares();
        for (const dir of removing) rmSync(dir, { recursive: true, force: true });
      });
    }
  }
  const dir = stock.take();
  const [requestsPath, repliesPath] = pairIn(dir);
  const fds: number[] = [];
  try {
    // Read-write host ends: opening never blocks, and neither end sees EOF when sandbox processes come and go.
    // Nothing is inherited: sandbox processes open the FIFOs by their sandbox path, so no fd names a host path.
    const hostRequests = openSync(requestsPath, constants.O_RDWR | constants.O_NONBLOCK);
    fds.push(hostRequests);
    const hostReplies = openSync(repliesPath, constants.O_RDWR | constants.O_NONBLOCK);
    fds.push(hostReplies);
    const requests = new Socket({ fd: hostRequests, readable: true, writable: false });
    const replies = new Socket({ fd: hostReplies, readable: false, writable: true });
    return {
      requestsPath,
      repliesPath,
      requests,
      replies,
      dispose: () => {
        requests.destroy();
        replies.destroy();
        removeLater(dir);
      },
    };
  } catch (error) {
    for (const fd of fds) closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
