// Starts the file helper (runners/fs_helper.py): one workspace operation done as the sandbox user
// inside fresh bubblewrap namespaces that hold only /usr and that workspace, so the kernel decides.

import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { z } from "zod";
import { SandgateError } from "../errors/index.js";
import { isolationArguments } from "./bwrap-args.js";
import { killGroup, spawnBwrap } from "./process-group.js";
import type { SandboxRuntime } from "./runtime.js";
import { Slots } from "./slots.js";

export interface FsHelperOptions {
  /** Raw bytes after the request line (the content of a write). */
  input?: Buffer;
  /** Longest reply accepted; a longer one kills the helper. */
  maxReplyBytes?: number;
  timeoutMs?: number;
  /** Kills the helper (the operation fails with SANDBOX_FAILED). */
  signal?: AbortSignal;
}

export interface FsHelperReply {
  header: Record<string, unknown> & { ok: boolean; error?: string; body: number };
  body: Buffer;
}

const replyHeader = z.object({ ok: z.boolean(), error: z.string().optional(), body: z.number().int().min(0) }).passthrough();

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_REPLY = 4 * 1024 * 1024;
/** Requests worked on at once, server-wide; a burst of file calls waits rather than forking without bound. */
const MAX_CONCURRENT = 8;

const slots = new Slots(MAX_CONCURRENT);

/**
 * util-linux's setpriv gives bubblewrap a parent-death signal: a helper (a deletion can run for
 * minutes) dies with the server instead of outliving it. Without it, close() still kills helpers.
 */
const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv"].find((path) => existsSync(path));

/**
 * The helper's command line. `proc`: a /proc of its own PID namespace, for an upload to link its
 * unnamed file (O_TMPFILE) into the workspace through /proc/self/fd. `source`: another workspace,
 * read-only at /source, for a copy into this one (a session's fork).
 */
export function helperArgv(runtime: SandboxRuntime, workspaceDir: string, seccompFd: number | undefined, proc = false, source?: string): string[] {
  const argv = [...(SETPRIV ? [SETPRIV, "--pdeathsig", "KILL", "--"] : []), runtime.bwrapPath, ...isolationArguments()];
  if (proc) argv.push("--proc", "/proc");
  argv.push("--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache");
  for (const path of runtime.readOnlyPaths) argv.push("--ro-bind", path, path);
  argv.push("--ro-bind", runtime.runnersDir, "/sandgate/runners", "--bind", workspaceDir, "/workspace");
  if (source !== undefined) argv.push("--ro-bind", source, "/source");
  argv.push("--remount-ro", "/", "--chdir", "/", "--clearenv", "--setenv", "LANG", "C.UTF-8");
  if (seccompFd !== undefined) argv.push("--seccomp", String(seccompFd));
  // The runners' copy is compiled as a whole: when the Python runner's entry is bytecode, so is the helper.
  const entry = runtime.runnerEntries.python.endsWith(".pyc") ? "/sandgate/runners/fs_helper.pyc" : "/sandgate/runners/fs_helper.py";
  argv.push("--", runtime.interpreters.python, "-I", "-S", "-B", entry);
  return argv;
}

function failed(what: string, detail: string): SandgateError {
  return new SandgateError("SANDBOX_FAILED", `the workspace file helper failed (${what}): ${detail.slice(0, 300)}`);
}

interface Pending {
  op: string;
  maxReply: number;
  resolve: (reply: FsHelperReply) => void;
  reject: (error: SandgateError) => void;
  timer: NodeJS.Timeout;
  onAbort?: () => void;
  signal?: AbortSignal;
}

/**
 * One helper process for one workspace, answering requests one at a time. Killed on a timeout,
 * an abort, an oversize or malformed answer, or close(); the next request starts a fresh one.
 */
export class FsHelper {
  private child: ChildProcess | undefined;
  /** The reply so far (after its header line, once that has come), joined once when complete. */
  private chunks: Buffer[] = [];
  private received = 0;
  private header: FsHelperReply["header"] | undefined;
  private stderr = "";
  private current: Pending | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Settles when the latest process and its pipes are gone. */
  private gone: Promise<void> = Promise.resolve();

  /** `idleMs`: the process leaves after this long without a request (0: after each request); `source`: see helperArgv. */
  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly workspaceDir: string,
    private readonly idleMs = 0,
    private readonly source?: string,
  ) {}

  /** Runs one operation; see runFsHelper. */
  run(request: Record<string, unknown>, options: FsHelperOptions = {}): Promise<FsHelperReply> {
    const next = this.queue.then(async () => {
      // A deletion may take minutes on a slow disk and must not hold up file calls; there is at
      // most one per ended session.
      const release = request.op === "delete" ? () => undefined : await slots.acquire();
      try {
        return await this.send(request, options);
      } finally {
        release();
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Kills the process for good (later requests fail) and waits until it is gone. */
  close(): Promise<void> {
    this.closed = true;
    this.stop(failed("close", "the workspace is no longer in use"));
    return this.gone;
  }

  private send(request: Record<string, unknown>, options: FsHelperOptions): Promise<FsHelperReply> {
    const op = String(request.op);
    if (this.closed) return Promise.reject(failed(op, "the workspace is no longer in use"));
    clearTimeout(this.idleTimer);
    const child = this.child ?? this.start();
    return new Promise<FsHelperReply>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const pending: Pending = {
        op,
        maxReply: options.maxReplyBytes ?? DEFAULT_MAX_REPLY,
        resolve,
        reject,
        timer: setTimeout(() => this.stop(failed(op, `no answer within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs),
      };
      this.current = pending;
      if (options.signal) {
        if (options.signal.aborted) return this.stop(failed(op, "stopped"));
        pending.signal = options.signal;
        pending.onAbort = () => this.stop(failed(op, "stopped"));
        options.signal.addEventListener("abort", pending.onAbort, { once: true });
      }
      const line = Buffer.from(`${JSON.stringify(request)}\n`);
      (child.stdin as Writable).write(options.input ? Buffer.concat([line, options.input]) : line);
    });
  }

  private start(): ChildProcess {
    const seccomp = this.runtime.seccompFile ? { file: this.runtime.seccompFile, fd: 3 } : undefined;
    const argv = helperArgv(this.runtime, this.workspaceDir, seccomp?.fd, false, this.source);
    const child = spawnBwrap({ argv, stdio: ["pipe", "pipe", "pipe"], seccomp, hostUser: this.runtime.hostUser });
    this.child = child;
    this.gone = new Promise((resolve) => child.once("close", () => resolve()));
    this.chunks = [];
    this.received = 0;
    this.header = undefined;
    this.stderr = "";
    (child.stdout as Readable).on("data", (chunk: Buffer) => this.onData(child, chunk));
    (child.stderr as Readable).on("data", (chunk: Buffer) => {
      if (this.stderr.length < 4096) this.stderr += chunk.toString("utf8");
    });
    (child.stdin as Writable).on("error", () => {
      // EPIPE: the helper is gone; its exit reports it
    });
    child.once("error", (error) => this.stop(failed(this.current?.op ?? "start", error.message), child));
    child.once("exit", (code, signal) => {
      // bubblewrap is gone; a process of its namespace that still holds a pipe (it dies with
      // bubblewrap, but may be slow to) must not keep anything waiting.
      const grace = setTimeout(() => {
        for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
      }, 2000);
      child.once("close", () => clearTimeout(grace));
      const why = this.stderr.trim() || `exit ${signal ?? code ?? "?"}, no answer`;
      this.stop(failed(this.current?.op ?? "idle", why), child);
    });
    return child;
  }

  private onData(child: ChildProcess, chunk: Buffer): void {
    if (child !== this.child) return;
    const pending = this.current;
    if (!pending) return this.stop(failed("idle", "the helper spoke unasked"));
    this.chunks.push(chunk);
    this.received += chunk.length;
    if (!this.header) {
      // Only the short header line is looked for in what has come so far (at most 64 KiB).
      const head = Buffer.concat(this.chunks, this.received);
      const newline = head.indexOf(10);
      if (newline < 0) {
        if (head.length > 65536) return this.stop(failed(pending.op, "an answer without an end"));
        this.chunks = [head];
        return;
      }
      const parsed = (() => {
        try {
          return replyHeader.safeParse(JSON.parse(head.subarray(0, newline).toString("utf8")));
        } catch {
          return undefined;
        }
      })();
      if (!parsed?.success) return this.stop(failed(pending.op, "a malformed answer"));
      this.header = parsed.data;
      const rest = head.subarray(newline + 1);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.received = rest.length;
    }
    const bodyBytes = this.header.body;
    if (bodyBytes > pending.maxReply) return this.stop(failed(pending.op, `the answer is longer than ${pending.maxReply} bytes`));
    if (this.received < bodyBytes) return;
    if (this.received > bodyBytes) return this.stop(failed(pending.op, "more than it announced"));
    // Joined once: a 64 MiB file read in 64 KiB pipe chunks is copied once, not a thousand times.
    const reply = { header: this.header, body: Buffer.concat(this.chunks, this.received) };
    this.header = undefined;
    this.chunks = [];
    this.received = 0;
    this.finish(pending);
    pending.resolve(reply);
    if (this.idleMs <= 0) this.stop(undefined);
    else this.idleTimer = setTimeout(() => this.stop(undefined), this.idleMs);
  }

  private finish(pending: Pending): void {
    clearTimeout(pending.timer);
    if (pending.onAbort) pending.signal?.removeEventListener("abort", pending.onAbort);
    if (this.current === pending) this.current = undefined;
  }

  /** Ends the process (when `of` is the current one); a request in flight fails with `why`. */
  private stop(why: SandgateError | undefined, of: ChildProcess | undefined = this.child): void {
    clearTimeout(this.idleTimer);
    if (of !== this.child) return;
    const pending = this.current;
    if (pending) {
      this.finish(pending);
      pending.reject(why ?? failed(pending.op, "stopped"));
    }
    const child = this.child;
    this.child = undefined;
    if (!child) return;
    if (why === undefined) {
      // A clean end: stdin closes and the helper's loop returns; one that lingers is killed.
      (child.stdin as Writable).end();
      setTimeout(() => killGroup(child), 5000).unref();
    } else {
      killGroup(child);
    }
  }
}


/**
 * Runs one helper operation on the workspace at `workspaceDir` in a helper of its own and returns
 * its reply: a header (`ok`, or `error` with the helper's reason) and the raw bytes after it.
 * Rejects with SANDBOX_FAILED when the helper times out, breaks down or answers too much.
 */
export async function runFsHelper(runtime: SandboxRuntime, workspaceDir: string, request: Record<string, unknown>, options: FsHelperOptions & { source?: string } = {}): Promise<FsHelperReply> {
  const helper = new FsHelper(runtime, workspaceDir, 0, options.source);
  try {
    return await helper.run(request, options);
  } finally {
    // Answered or not, the process is gone before the caller goes on.
    await helper.close();
  }
}
