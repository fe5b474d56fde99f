// Streamed workspace transfers: an upload fed to a file helper of its own in frames, and a download
// read from one as a stream, so a 100 MB file never sits whole in the server's memory.

import type { ChildProcess } from "node:child_process";
import { PassThrough, type Readable, type Writable } from "node:stream";
import { SandgateError } from "../errors/index.js";
import { helperArgv } from "./fs-helper.js";
import { killGroup, spawnBwrap } from "./process-group.js";
import type { SandboxRuntime } from "./runtime.js";
import { Slots } from "./slots.js";
import { DEFAULT_MINIMUM_RATE, describeRate, watchPace, type MinimumRate } from "./transfer-pace.js";

/** The helper's reply line: `ok`, or `error` with its reason, and what the operation reports. */
export type TransferHeader = Record<string, unknown> & { ok: boolean; error?: string };

export interface TransferOptions {
  /** Kills the helper: an upload leaves nothing, a download's stream fails. A wait for a place ends too. */
  signal?: AbortSignal;
  /** The whole transfer's deadline. */
  timeoutMs: number;
  /** The least pace: a transfer slower than this is ended (DEFAULT_MINIMUM_RATE unless given). */
  minRate?: MinimumRate;
  /** Longest wait for a transfer place (PLACE_WAIT_MS unless given). */
  placeWaitMs?: number;
}

/** Transfers at once, server-wide (apart from the file calls' own 8): the rest wait their turn. Each caller has at most 4 (engine-files.ts). */
const transfers = new Slots(16);
/**
 * Longest wait for one of them. Places come free: every transfer keeps the minimum rate or is
 * ended, so a wait of two rate windows outlasts any transfer too slow to deserve its place.
 */
const PLACE_WAIT_MS = 2 * DEFAULT_MINIMUM_RATE.windowMs;
/** Largest frame the helper accepts. */
const MAX_FRAME = 1 << 20;
/** After the helper exits, how long a process of its namespace may still hold its pipes (it dies with bubblewrap, maybe slowly). */
const PIPE_GRACE_MS = 2000;
const COMMIT = Buffer.alloc(4);
const ABORT = Buffer.from([0xff, 0xff, 0xff, 0xff]);

function failed(what: string, detail: string): SandgateError {
  return new SandgateError("SANDBOX_FAILED", `the workspace file helper failed (${what}): ${detail.slice(0, 300)}`);
}

function tooSlow(what: "upload" | "download", rate: MinimumRate): SandgateError {
  const rest = what === "upload" ? "nothing was written; send faster or retry on a better link" : "read it faster or retry on a better link";
  return new SandgateError("REQUEST_TIMEOUT", `the ${what} moved less than ${describeRate(rate)}, the least pace a file transfer must keep, and was ended to free its place; ${rest}`, {
    data: { limit: rate.bytes },
  });
}

/** Waits for a server-wide transfer place: TOO_MANY_REQUESTS after `placeWaitMs`, SANDBOX_FAILED when stopped. */
async function takePlace(what: "upload" | "download", options: TransferOptions): Promise<() => void> {
  const waitMs = options.placeWaitMs ?? PLACE_WAIT_MS;
  try {
    return await transfers.acquire({
      signal: options.signal,
      timeoutMs: waitMs,
      timeoutError: () =>
        new SandgateError(
          "TOO_MANY_REQUESTS",
          `the server has ${transfers.size} file uploads and downloads under way, the most it runs at once, and none ended within ${Math.round(waitMs / 1000)} s; retry the ${what} in a few seconds`,
          { data: { limit: transfers.size, retry_after: 5 } },
        ),
    });
  } catch (error) {
    if (error instanceof SandgateError) throw error;
    throw failed(what, "stopped while it waited for a transfer place");
  }
}

/**
 * One helper process for one transfer, and the owner of the server-wide place it holds: the place
 * is given back once, when the process has exited (or could not be started), whatever its pipes
 * are doing. A reader that pauses the output and goes away must not keep the place: the process's
 * `close` waits for its pipes, which a paused, unread pipe never gives.
 */
class TransferHelper {
  readonly child: ChildProcess;
  /** The reply line, and the bytes that came after it in the same chunk. */
  readonly header: Promise<{ header: TransferHeader; rest: Buffer }>;
  /** Settles when the process has exited; its place is free by then. */
  readonly gone: Promise<void>;
  private reason: string | undefined;
  private stderr = "";
  /** A download's body reads the output after the process exited: its pipe is not cut then. */
  private outputInUse = false;
  private released = false;

  constructor(
    private readonly place: () => void,
    runtime: SandboxRuntime,
    workspaceDir: string,
    request: Record<string, unknown>,
    options: TransferOptions,
  ) {
    const op = String(request.op);
    const seccomp = runtime.seccompFile ? { file: runtime.seccompFile, fd: 3 } : undefined;
    try {
      this.child = spawnBwrap({ argv: helperArgv(runtime, workspaceDir, seccomp?.fd, op === "upload"), stdio: ["pipe", "pipe", "pipe"], seccomp, hostUser: runtime.hostUser });
    } catch (error) {
      this.release();
      throw error;
    }
    const child = this.child;
    (child.stderr as Readable).on("data", (chunk: Buffer) => {
      if (this.stderr.length < 4096) this.stderr += chunk.toString("utf8");
    });
    (child.stdin as Writable).on("error", () => {
      // EPIPE: the helper refused and left; its reply says why
    });
    const timer = setTimeout(() => this.stop(`no end within ${Math.round(options.timeoutMs / 1000)} s`), options.timeoutMs);
    const onAbort = (): void => this.stop("stopped");
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    this.gone = new Promise<void>((resolve) => {
      const ended = (): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        this.release();
        resolve();
      };
      child.once("exit", () => {
        ended();
        // What is left in the pipes is read within the grace; then they go, so nothing waits on them.
        const grace = setTimeout(() => this.closePipes(!this.outputInUse), PIPE_GRACE_MS);
        child.once("close", () => clearTimeout(grace));
      });
      // Not started at all (no exit follows).
      child.once("error", ended);
    });
    this.header = this.readHeader(op);
    (child.stdin as Writable).write(`${JSON.stringify(request)}\n`);
  }

  /** Kills the process group and cuts its pipes; the place comes back with the exit. Idempotent. */
  stop(why: string): void {
    this.reason ??= why;
    killGroup(this.child);
    this.closePipes(true);
  }

  /** The caller reads the output past the header (a download's body): it is not cut when the process exits. */
  keepOutput(): void {
    this.outputInUse = true;
  }

  private closePipes(output: boolean): void {
    this.child.stdin?.destroy();
    this.child.stderr?.destroy();
    if (output) this.child.stdout?.destroy();
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.place();
  }

  /** The reply line; a helper that dies or closes its output first rejects it. */
  private readHeader(op: string): Promise<{ header: TransferHeader; rest: Buffer }> {
    const child = this.child;
    return new Promise((resolve, reject) => {
      const stdout = child.stdout as Readable;
      let head = Buffer.alloc(0);
      const onData = (chunk: Buffer): void => {
        head = Buffer.concat([head, chunk]);
        const newline = head.indexOf(10);
        if (newline < 0) {
          if (head.length > 65536) this.stop("an answer without an end");
          return;
        }
        stdout.off("data", onData);
        stdout.pause();
        try {
          const parsed = JSON.parse(head.subarray(0, newline).toString("utf8")) as TransferHeader;
          if (typeof parsed !== "object" || parsed === null || typeof parsed.ok !== "boolean") throw new Error("no ok");
          resolve({ header: parsed, rest: head.subarray(newline + 1) });
        } catch {
          this.stop("a malformed answer");
          reject(failed(op, "a malformed answer"));
        }
      };
      stdout.on("data", onData);
      child.once("error", (error) => reject(failed(op, error.message)));
      // Settles nothing when the header came first (a promise settles once).
      const noAnswer = (): void => reject(failed(op, this.reason ?? (this.stderr.trim() || `exit ${child.signalCode ?? child.exitCode ?? "?"}, no answer`)));
      stdout.once("end", noAnswer);
      stdout.once("close", noAnswer);
    });
  }
}

/** Writes one chunk, waiting while the pipe is full; false once the helper stopped reading. */
async function put(stdin: Writable, chunk: Uint8Array, ended: () => boolean): Promise<boolean> {
  if (ended() || stdin.destroyed) return false;
  if (stdin.write(chunk)) return true;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      stdin.off("drain", done);
      stdin.off("close", done);
      resolve();
    };
    stdin.on("drain", done);
    stdin.on("close", done);
  });
  return !ended() && !stdin.destroyed;
}

/**
 * Streams `source` into the workspace as `request` (op "upload") says. When `source` throws (the
 * client went away, a cap was passed) the helper is told to drop the file, the error is rethrown,
 * and nothing is left; a refusal of the helper is returned as its header. The helper is gone
 * before this settles.
 */
export async function uploadStream(
  runtime: SandboxRuntime,
  workspaceDir: string,
  request: Record<string, unknown>,
  source: AsyncIterable<Uint8Array>,
  options: TransferOptions,
): Promise<TransferHeader> {
  const place = await takePlace("upload", options);
  // An abort is told to the helper between frames, so that it removes what it made; a kill is the backstop.
  const helper = new TransferHelper(place, runtime, workspaceDir, { ...request, op: "upload" }, { timeoutMs: options.timeoutMs });
  const rate = options.minRate ?? DEFAULT_MINIMUM_RATE;
  // Not a race against one long-pending promise: each race would stay attached to it with its chunk.
  let isStopped = false;
  let stopError = failed("upload", "stopped");
  let rejectWait: ((error: SandgateError) => void) | undefined;
  const stop = (why: SandgateError): void => {
    if (isStopped) return;
    isStopped = true;
    stopError = why;
    rejectWait?.(why);
    setTimeout(() => helper.stop("stopped"), 5000).unref();
  };
  const stopped = (): void => stop(failed("upload", "stopped"));
  // Bytes handed to the helper: a sender slower than the minimum rate loses its place.
  let sent = 0;
  const pace = watchPace(rate, () => sent, () => stop(tooSlow("upload", rate)));
  const nextChunk = (chunks: AsyncIterator<Uint8Array>): Promise<IteratorResult<Uint8Array>> =>
    new Promise((resolve, reject) => {
      if (isStopped) return reject(stopError);
      rejectWait = reject;
      chunks.next().then(resolve, reject);
    });
  if (options.signal?.aborted) stopped();
  else options.signal?.addEventListener("abort", stopped, { once: true });
  let answered = false;
  const header = helper.header.then(
    (reply) => {
      answered = true;
      return reply.header;
    },
    (error: unknown) => {
      answered = true;
      throw error;
    },
  );
  header.catch(() => undefined);
  const stdin = helper.child.stdin as Writable;
  try {
    const chunks = source[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await nextChunk(chunks);
        rejectWait = undefined;
        if (next.done) break;
        const chunk = next.value;
        sent += chunk.length;
        for (let at = 0; at < chunk.length; at += MAX_FRAME) {
          const part = chunk.subarray(at, Math.min(chunk.length, at + MAX_FRAME));
          const length = Buffer.alloc(4);
          length.writeUInt32BE(part.length);
          if (!(await put(stdin, length, () => answered)) || !(await put(stdin, part, () => answered))) break;
        }
        if (answered) {
          void chunks.return?.();
          break;
        }
      }
    } catch (error) {
      void chunks.return?.()?.catch(() => undefined);
      // The helper drops its unnamed file and answers; a helper that does not is killed.
      if (!answered) stdin.end(ABORT);
      const late = setTimeout(() => helper.stop("aborted"), 5000);
      await helper.gone;
      clearTimeout(late);
      throw error;
    }
    // All sent: what is left is the helper's (bounded by timeoutMs), not the sender's pace.
    pace.stop();
    if (!answered) stdin.end(COMMIT);
    return await header;
  } finally {
    pace.stop();
    options.signal?.removeEventListener("abort", stopped);
    if (!stdin.writableEnded) stdin.end();
    if (!answered) helper.stop("stopped");
    // A refusal answered early: the helper leaves by itself; one that lingers goes.
    const late = setTimeout(() => helper.stop("lingered"), 5000);
    await helper.gone;
    clearTimeout(late);
  }
}

export interface DownloadStream {
  header: TransferHeader;
  /** The file's bytes (header.size of them) when header.ok; fails when fewer came. */
  body?: Readable;
}

/**
 * Opens a workspace file for streaming (op "download"). A refusal comes back as the header; on
 * success `body` gives exactly `header.size` bytes, and destroying it kills the helper.
 */
export async function downloadStream(runtime: SandboxRuntime, workspaceDir: string, request: Record<string, unknown>, options: TransferOptions): Promise<DownloadStream> {
  const place = await takePlace("download", options);
  const helper = new TransferHelper(place, runtime, workspaceDir, { ...request, op: "download" }, options);
  (helper.child.stdin as Writable).end();
  let reply: { header: TransferHeader; rest: Buffer };
  try {
    reply = await helper.header;
  } catch (error) {
    helper.stop("failed");
    throw error;
  }
  if (!reply.header.ok) return { header: reply.header };
  helper.keepOutput();
  const size = Number(reply.header.size);
  const stdout = helper.child.stdout as Readable;
  const body = new PassThrough({ highWaterMark: MAX_FRAME });
  let received = 0;
  // Bytes the reader took: what came from the helper less what still waits in the body.
  const taken = (): number => received - body.readableLength - body.writableLength;
  const rate = options.minRate ?? DEFAULT_MINIMUM_RATE;
  const pace = watchPace(rate, taken, () => body.destroy(tooSlow("download", rate)), () => size - taken());
  const take = (chunk: Buffer): boolean => {
    received += chunk.length;
    if (received > size) {
      body.destroy(failed("download", "more than it announced"));
      return false;
    }
    return body.write(chunk);
  };
  body.once("close", () => {
    pace.stop();
    helper.stop("the reader went away");
  });
  if (reply.rest.length > 0) take(reply.rest);
  stdout.on("data", (chunk: Buffer) => {
    if (!take(chunk)) stdout.pause();
  });
  body.on("drain", () => stdout.resume());
  const ended = (): void => {
    if (received === size) body.end();
    else body.destroy(failed("download", `the file changed while it was read (${received} of ${size} bytes)`));
  };
  // Every byte came: a stop that cut the pipe before its end was read (the session ended) took nothing.
  const cut = (): void => {
    if (body.writableEnded) return;
    if (received === size) body.end();
    else body.destroy(failed("download", "the helper stopped"));
  };
  // A small file's output may have ended (and closed) while the header was awaited.
  if (stdout.readableEnded) ended();
  else if (stdout.destroyed) cut();
  else {
    stdout.once("end", ended);
    stdout.once("close", cut);
  }
  stdout.resume();
  return { header: reply.header, body };
}
