// The tool pipe as two named pipes (FIFOs) per sandbox, bound into it at a fixed path: sandgate-tool opens
// them by path, so it works from programs that closed the fds they inherited (Python's subprocess, Node's execFileSync).

import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, closeSync, constants, mkdirSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { Socket } from "node:net";
import { join } from "node:path";
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
 * Makes the FIFO pair in a fresh directory under `parent`: mode 0600, owned by the sandbox's host user,
 * so only this sandbox (the only place they are bound) and the host open them.
 */
export function createToolFifos(parent: string, hostUser: HostUser | undefined): ToolFifos {
  mkdirSync(parent, { recursive: true, mode: 0o711 });
  const dir = mkdtempSync(join(parent, "tool-"));
  chmodSync(dir, 0o711);
  const requestsPath = join(dir, "requests");
  const repliesPath = join(dir, "replies");
  const fds: number[] = [];
  try {
    // Node has no mkfifo; coreutils' does it in one short-lived process.
    execFileSync("mkfifo", ["-m", "0600", requestsPath, repliesPath], { stdio: "ignore", timeout: 10_000 });
    if (hostUser) for (const path of [requestsPath, repliesPath]) chownSync(path, hostUser.uid, hostUser.gid);
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
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    for (const fd of fds) closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
