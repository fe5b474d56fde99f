// Streamed workspace transfers: an upload fed to a file helper of its own in frames, and a download
// read from one as a stream, so a 100 MB file never sits whole in the server's memory.

import type { ChildProcess } from "node:child_process";
import { PassThrough, type Readable, type Writable } from "node:stream";
import { SandgateError } from "../errors/index.js";
import { helperArgv } from "./fs-helper.js";
import { killGroup, spawnBwrap } from "./process-group.js";
import type { SandboxRuntime } from "./runtime.js";
import { Slots } from "./slots.js";

/** The helper's reply line: `ok`, or `error` with its reason, and what the operation reports. */
export type TransferHeader = Record<string, unknown> & { ok: boolean; error?: string };

export interface TransferOptions {
  /** Kills the helper: an upload leaves nothing, a download's stream fails. */
  signal?: AbortSignal;
  /** The whole transfer's deadline. */
  timeoutMs: number;
}

/** Transfers at once, server-wide (apart from the file calls' own 8): the rest wait their turn. Each caller has at most 4 (engine-files.ts). */
const transfers = new Slots(16);
/** Largest frame the helper accepts. */
const MAX_FRAME = 1 << 20;
/** A download whose reader takes nothing for this long is stopped (its helper holds a place). */
const DOWNLOAD_STALL_MS = 60_000;
const COMMIT = Buffer.alloc(4);
const ABORT = Buffer.from([0xff, 0xff, 0xff, 0xff]);

function failed(what: string, detail: string): SandgateError {
  return new SandgateError("SANDBOX_FAILED", `the workspace file helper failed (${what}): ${detail.slice(0, 300)}`);
}

interface Started {
  child: ChildProcess;
  /** The reply line, and the bytes that came after it in the same chunk. */
  header: Promise<{ header: TransferHeader; rest: Buffer }>;
  /** Settles when the process and its pipes are gone. */
  gone: Promise<void>;
  stop(why: string): void;
}

/** Starts a one-shot helper for `request` and reads its reply line; a helper that dies first rejects it. */
function start(runtime: SandboxRuntime, workspaceDir: string, request: Record<string, unknown>, options: TransferOptions): Started {
  const op = String(request.op);
  const seccomp = runtime.seccompFile ? { file: runtime.seccompFile, fd: 3 } : undefined;
  const child = spawnBwrap({ argv: helperArgv(runtime, workspaceDir, seccomp?.fd, op === "upload"), stdio: ["pipe", "pipe", "pipe"], seccomp, hostUser: runtime.hostUser });
  const gone = new Promise<void>((resolve) => child.once("close", () => resolve()));
  let stderr = "";
  (child.stderr as Readable).on("data", (chunk: Buffer) => {
    if (stderr.length < 4096) stderr += chunk.toString("utf8");
  });
  (child.stdin as Writable).on("error", () => {
    // EPIPE: the helper refused and left; its reply says why
  });
  let reason: string | undefined;
  const stop = (why: string): void => {
    reason ??= why;
    killGroup(child);
  };
  const timer = setTimeout(() => stop(`no end within ${Math.round(options.timeoutMs / 1000)} s`), options.timeoutMs);
  child.once("close", () => clearTimeout(timer));
  const onAbort = (): void => stop("stopped");
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  child.once("close", () => options.signal?.removeEventListener("abort", onAbort));

  const header = new Promise<{ header: TransferHeader; rest: Buffer }>((resolve, reject) => {
    const stdout = child.stdout as Readable;
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const newline = head.indexOf(10);
      if (newline < 0) {
        if (head.length > 65536) stop("an answer without an end");
        return;
      }
      stdout.off("data", onData);
      stdout.pause();
      try {
        const parsed = JSON.parse(head.subarray(0, newline).toString("utf8")) as TransferHeader;
        if (typeof parsed !== "object" || parsed === null || typeof parsed.ok !== "boolean") throw new Error("no ok");
        resolve({ header: parsed, rest: head.subarray(newline + 1) });
      } catch {
        stop("a malformed answer");
        reject(failed(op, "a malformed answer"));
      }
    };
    stdout.on("data", onData);
    child.once("error", (error) => reject(failed(op, error.message)));
    child.once("exit", (code, signal) => {
      // Settles nothing when the header came first (a promise settles once).
      reject(failed(op, reason ?? (stderr.trim() || `exit ${signal ?? code ?? "?"}, no answer`)));
    });
  });
  (child.stdin as Writable).write(`${JSON.stringify(request)}\n`);
  return { child, header, gone, stop };
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

/** start(), giving the transfer place back when the helper cannot even be launched (a throw before any process). */
function startHolding(release: () => void, ...args: Parameters<typeof start>): Started {
  try {
    return start(...args);
  } catch (error) {
    release();
    throw error;
  }
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
  const release = await transfers.acquire();
  // An abort is told to the helper between frames, so that it removes what it made; a kill is the backstop.
  const helper = startHolding(release, runtime, workspaceDir, { ...request, op: "upload" }, { timeoutMs: options.timeoutMs });
  // Not a race against one long-pending promise: each race would stay attached to it with its chunk.
  let isStopped = false;
  let rejectWait: ((error: SandgateError) => void) | undefined;
  const stopped = (): void => {
    isStopped = true;
    rejectWait?.(failed("upload", "stopped"));
    setTimeout(() => helper.stop("stopped"), 5000).unref();
  };
  const nextChunk = (chunks: AsyncIterator<Uint8Array>): Promise<IteratorResult<Uint8Array>> =>
    new Promise((resolve, reject) => {
      if (isStopped) return reject(failed("upload", "stopped"));
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
    if (!answered) stdin.end(COMMIT);
    return await header;
  } finally {
    options.signal?.removeEventListener("abort", stopped);
    if (!stdin.writableEnded) stdin.end();
    if (!answered) helper.stop("stopped");
    // A refusal answered early: the helper leaves by itself; one that lingers goes.
    const late = setTimeout(() => helper.stop("lingered"), 5000);
    await helper.gone;
    clearTimeout(late);
    release();
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
  const release = await transfers.acquire();
  const helper = startHolding(release, runtime, workspaceDir, { ...request, op: "download" }, options);
  void helper.gone.then(release);
  (helper.child.stdin as Writable).end();
  let reply: { header: TransferHeader; rest: Buffer };
  try {
    reply = await helper.header;
  } catch (error) {
    helper.stop("failed");
    throw error;
  }
  if (!reply.header.ok) return { header: reply.header };
  const size = Number(reply.header.size);
  const stdout = helper.child.stdout as Readable;
  const body = new PassThrough({ highWaterMark: MAX_FRAME });
  let received = 0;
  const stall = setTimeout(() => body.destroy(failed("download", "the reader took nothing for 60 s")), DOWNLOAD_STALL_MS);
  const take = (chunk: Buffer): boolean => {
    stall.refresh();
    received += chunk.length;
    if (received > size) {
      body.destroy(failed("download", "more than it announced"));
      return false;
    }
    return body.write(chunk);
  };
  body.once("close", () => {
    clearTimeout(stall);
    helper.stop("the reader went away");
  });
  if (reply.rest.length > 0) take(reply.rest);
  stdout.on("data", (chunk: Buffer) => {
    if (!take(chunk)) stdout.pause();
  });
  body.on("drain", () => stdout.resume());
  stdout.once("end", () => {
    if (received === size) body.end();
    else body.destroy(failed("download", `the file changed while it was read (${received} of ${size} bytes)`));
  });
  void helper.gone.then(() => {
    if (!body.writableEnded) body.destroy(failed("download", "the helper stopped"));
  });
  stdout.resume();
  return { header: reply.header, body };
}
