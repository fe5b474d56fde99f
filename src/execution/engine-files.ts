// engine.files: reading, writing and listing a session's workspace files for its owner, through
// a file helper kept per session, and the check of a workspace against its limits after a call.
// Every operation is recorded as a `file` event when the engine has a file event sink (hooks.ts).

import { SandgateError } from "../errors/index.js";
import type { FileEvent } from "../store/audit-events.js";
import { FsHelper, type MinimumRate, type SandboxRuntime } from "../sandbox/index.js";
import { guardedBody } from "./guarded-download.js";
import { OutputBoundary } from "./output-boundary.js";
import { encodeText, sniffEncoding, textDecoder } from "./text-encoding.js";
import type { FileEventSink } from "./hooks.js";
import type { Session } from "./session.js";
import type { OutputGuard } from "./upstream-call-scope.js";
import { LOCAL_OWNER, type SessionManager } from "./sessions.js";
import {
  copyWorkspace,
  listWorkspaceFiles,
  readWorkspaceFile,
  workspaceUsage,
  writeWorkspaceFile,
  type FileEncoding,
  type WorkspaceEntry,
  type WorkspaceFileLimits,
  type WorkspaceCopy,
  type WorkspaceTarget,
} from "./workspace-files.js";
import { downloadWorkspaceFile, uploadWorkspaceFile, type DownloadedFile, type UploadedFile } from "./workspace-transfer.js";

/** How long a session's file helper waits for the next request before it leaves. */
const FILE_HELPER_IDLE_MS = 30_000;
/** Streamed transfers one caller may have at once (the server runs 16): more get 429, so none can take them all. */
const TRANSFERS_PER_OWNER = 4;

export interface WorkspaceFile {
  /** Where code sees the file (under /workspace). */
  path: string;
  content: string;
  encoding: FileEncoding;
  size: number;
}

export interface WrittenFile {
  path: string;
  size: number;
  created: boolean;
}

/** How a streamed transfer is bounded, and who may stop it. */
export interface TransferOptions {
  owner?: string;
  /** The client went away: the transfer stops and an upload leaves nothing. */
  signal?: AbortSignal;
  /** The whole transfer's deadline, milliseconds. */
  timeoutMs: number;
  /** The least pace: a slower transfer is ended and its place freed (16 KiB per 30 s unless given). */
  minRate?: MinimumRate;
  /** Longest wait for a server-wide transfer place (60 s unless given); then TOO_MANY_REQUESTS. */
  placeWaitMs?: number;
}

/** What of `options` the workspace transfer takes, with its own signal. */
function paceOf(options: TransferOptions): { timeoutMs: number; minRate?: MinimumRate; placeWaitMs?: number } {
  return {
    timeoutMs: options.timeoutMs,
    ...(options.minRate ? { minRate: options.minRate } : {}),
    ...(options.placeWaitMs !== undefined ? { placeWaitMs: options.placeWaitMs } : {}),
  };
}

export interface WorkspaceListing {
  path: string;
  entries: WorkspaceEntry[];
  truncated: boolean;
}

/**
 * A text file as the agent may see it: a tool result the code wrote to a file is tokenized like its
 * output, in the encoding it was written in (UTF-8, UTF-16, UTF-32, or byte for byte as Latin-1).
 */
async function guardedFile(file: WorkspaceFile, guard: OutputGuard | undefined): Promise<WorkspaceFile> {
  if (!guard?.active) return file;
  const bytes = file.encoding === "base64" ? Buffer.from(file.content, "base64") : Buffer.from(file.content, "utf8");
  const encoding = sniffEncoding(bytes, true);
  if (encoding === "binary") return file; // binary files are handed over as they are
  const text = textDecoder(encoding)(bytes, true);
  // Scanned in slices, taking turns with other callers: a big file does not hold the server.
  const guarded = await new OutputBoundary(guard).scan(text, false);
  if (guarded === text) return file;
  const out = encodeText(guarded, encoding);
  const content = file.encoding === "base64" ? out.toString("base64") : guarded;
  return { ...file, content, size: out.length };
}

/**
 * Workspace files of sessions; every method runs at once, alongside the session's running calls and
 * jobs (files need no interpreter), once its workspace is ready, and rejects (never throws) with SESSION_NOT_FOUND or SESSION_EXPIRED for a session it cannot use.
 */
export class EngineFiles {
  /** Each session's file helper while it is in use (see target()). */
  private readonly helpers = new Map<Session, FsHelper>();
  /** Streamed transfers under way, stopped when their session ends (their helpers hold the workspace). */
  private readonly transfers = new Map<Session, Set<AbortController>>();
  /** Streamed transfers of each caller, waiting or under way. */
  private readonly ownerTransfers = new Map<string, number>();

  /** @internal Built by the Engine. */
  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly sessions: SessionManager,
    private readonly limits: WorkspaceFileLimits,
    /** Where file operations are recorded (the audit); none for library and test engines. */
    private readonly events?: FileEventSink,
    /** What guards a session's text files on their way to the agent (PII tokens), from code mode. */
    private readonly guardFor?: (owner: string, sessionId: string) => OutputGuard | undefined,
  ) {}

  /**
   * Runs one file operation and records it, ok or failed. A refused record (the audit could not take
   * it in time) fails the request: nothing is handed back unrecorded.
   */
  private async audited<T>(operation: FileEvent["operation"], owner: string, sessionId: string, path: string, run: () => Promise<T>, bytes: (done: T) => number | undefined, abandon?: (done: T) => void): Promise<T> {
    const events = this.events;
    if (!events) return run();
    const event = { kind: "file" as const, client: owner, sessionId, operation, path };
    let done: T;
    try {
      done = await run();
    } catch (error) {
      const code = error instanceof SandgateError ? error.code : "INTERNAL";
      await events.record({ ...event, outcome: "error", error: code }).catch(() => undefined);
      throw error;
    }
    const size = bytes(done);
    try {
      await events.record({ ...event, outcome: "ok", ...(size === undefined ? {} : { bytes: size }) });
    } catch (error) {
      abandon?.(done);
      throw error;
    }
    return done;
  }

  /** Reads a file of `owner`'s session `sessionId`. */
  async read(sessionId: string, path: string, encoding: FileEncoding = "utf8", owner: string = LOCAL_OWNER): Promise<WorkspaceFile> {
    return this.audited(
      "read",
      owner,
      sessionId,
      path,
      async () => {
        const session = this.sessions.get(owner, sessionId);
        const file = await session.alongside(() => readWorkspaceFile(this.target(session), path, encoding, this.limits));
        return guardedFile(file, this.guardFor?.(session.owner, session.id));
      },
      (file) => file.size,
    );
  }

  /**
   * Copies `source`'s workspace into `target`'s (a fresh, empty one) as the sandbox user: what is
   * there at the moment, while calls of `source` may go on. Recorded as a `fork` of `source`.
   */
  async copyInto(source: Session, target: Session): Promise<WorkspaceCopy> {
    return this.audited(
      "fork",
      source.owner,
      source.id,
      `/workspace -> session ${target.id}`,
      () => source.alongside(() => target.alongside(() => copyWorkspace({ runtime: this.runtime, dir: target.workspaceDir }, source.workspaceDir, this.limits))),
      (copy) => copy.bytes,
    );
  }

  /** Writes a file, creating missing parents; refused (FILE_TOO_LARGE) while the workspace is over its limits. */
  async write(sessionId: string, path: string, content: string, encoding: FileEncoding = "utf8", owner: string = LOCAL_OWNER): Promise<WrittenFile> {
    return this.audited("write", owner, sessionId, path, () => this.writeNow(sessionId, path, content, encoding, owner), (file) => file.size);
  }

  private async writeNow(sessionId: string, path: string, content: string, encoding: FileEncoding, owner: string): Promise<WrittenFile> {
    const session = this.sessions.get(owner, sessionId);
    return session.alongside(async () => {
      if (session.overLimit !== undefined) {
        throw new SandgateError("FILE_TOO_LARGE", `${session.overLimit} (file_write is refused until it is within them)`, {
          data: { path, limit: this.limits.workspaceBytes },
        });
      }
      const written = await writeWorkspaceFile(this.target(session), path, content, encoding, this.limits);
      session.touch();
      return written;
    });
  }

  /**
   * Streams `source` into a file of the session, at once; the file appears whole or
   * not at all. Refused like write() while the workspace is over its limits.
   */
  async upload(sessionId: string, path: string, source: AsyncIterable<Uint8Array>, maxUploadBytes: number, options: TransferOptions): Promise<UploadedFile> {
    const owner = options.owner ?? LOCAL_OWNER;
    return this.audited(
      "upload",
      owner,
      sessionId,
      path,
      async () => {
        const session = this.sessions.get(owner, sessionId);
        const release = this.admit(owner);
        try {
          return await this.uploadNow(session, path, source, maxUploadBytes, options);
        } finally {
          release();
        }
      },
      (file) => file.size,
    );
  }

  private uploadNow(session: Session, path: string, source: AsyncIterable<Uint8Array>, maxUploadBytes: number, options: TransferOptions): Promise<UploadedFile> {
    return session.alongside(async () => {
      if (session.overLimit !== undefined) {
        throw new SandgateError("WORKSPACE_FULL", `${session.overLimit} (uploads are refused until it is within them)`, { data: { path, limit: this.limits.workspaceBytes } });
      }
      const limits = { ...this.limits, maxUploadBytes, measure: !session.filesystem };
      const uploaded = await this.transfer(session, options, (signal) =>
        uploadWorkspaceFile({ runtime: this.runtime, dir: session.workspaceDir, signal, ...paceOf(options) }, path, source, limits),
      );
      session.touch();
      return uploaded;
    });
  }

  /** A file of the session as a stream of its bytes (any size), opened at once. */
  async download(sessionId: string, path: string, options: TransferOptions): Promise<DownloadedFile> {
    const owner = options.owner ?? LOCAL_OWNER;
    return this.audited(
      "download",
      owner,
      sessionId,
      path,
      () => this.downloadNow(sessionId, path, options),
      (file) => file.size,
      (file) => file.body.destroy(),
    );
  }

  private async downloadNow(sessionId: string, path: string, options: TransferOptions): Promise<DownloadedFile> {
    const session = this.sessions.get(options.owner ?? LOCAL_OWNER, sessionId);
    const release = this.admit(options.owner ?? LOCAL_OWNER);
    return session
      .alongside(async () => {
        const controller = new AbortController();
        const done = this.track(session, controller, options.signal);
        try {
          const file = await downloadWorkspaceFile({ runtime: this.runtime, dir: session.workspaceDir, signal: controller.signal, ...paceOf(options) }, path);
          file.body.once("close", () => {
            done();
            release();
          });
          // A text file the code wrote from tool data is tokenized like file_read's answer.
          const guard = this.guardFor?.(session.owner, session.id);
          return guard?.active ? { ...file, body: guardedBody(file.body, guard), guarded: true } : file;
        } catch (error) {
          done();
          throw error;
        }
      })
      .catch((error: unknown) => {
        release();
        throw error;
      });
  }

  /** Counts a transfer of `owner`; TOO_MANY_REQUESTS past TRANSFERS_PER_OWNER. The returned function ends it (once). */
  private admit(owner: string): () => void {
    const now = this.ownerTransfers.get(owner) ?? 0;
    if (now >= TRANSFERS_PER_OWNER) {
      throw new SandgateError("TOO_MANY_REQUESTS", `you have ${now} file uploads or downloads under way, the most one caller may have at once; retry when one has finished`, {
        data: { limit: TRANSFERS_PER_OWNER, retry_after: 1 },
      });
    }
    this.ownerTransfers.set(owner, now + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.ownerTransfers.get(owner) ?? 1) - 1;
      if (left <= 0) this.ownerTransfers.delete(owner);
      else this.ownerTransfers.set(owner, left);
    };
  }

  /** One directory level of the workspace (its root when `path` is omitted). */
  async list(sessionId: string, path?: string, owner: string = LOCAL_OWNER): Promise<WorkspaceListing> {
    return this.audited(
      "list",
      owner,
      sessionId,
      path ?? "",
      async () => {
        const session = this.sessions.get(owner, sessionId);
        const listing = await session.alongside(() => listWorkspaceFiles(this.target(session), path));
        // Names the code gave files from tool data (alice@example.com.json) are tokenized like its output.
        const guard = this.guardFor?.(session.owner, session.id);
        if (!guard?.active) return listing;
        return { ...listing, entries: listing.entries.map((e) => ({ ...e, name: guard.text(e.name, false), path: guard.text(e.path, false) })) };
      },
      () => undefined,
    );
  }

  /**
   * Why the session's workspace is over its limits after a call (bytes, directory blocks
   * included, and files plus directories), or undefined when it is within them.
   * @internal The engine asks after every session call.
   */
  async overLimit(session: Session, workspaceBytes: number): Promise<string | undefined> {
    // Its own filesystem: the kernel already refused every write past the limits (ENOSPC).
    if (session.filesystem) return undefined;
    const inodes = this.limits.workspaceInodes;
    const both = `${Math.round(workspaceBytes / 1048576)} MB and ${inodes} files and directories`;
    try {
      const usage = await workspaceUsage(this.target(session), { workspaceBytes, workspaceInodes: inodes });
      if (!usage.over) return undefined;
      const what = usage.inodes > inodes ? `more than ${inodes} files and directories` : `more than ${Math.round(workspaceBytes / 1048576)} MB`;
      return `the workspace holds ${what}; its limits are ${both}; delete files before writing more`;
    } catch {
      return `the workspace could not be measured against its limits (${both}); delete files before writing more`;
    }
  }

  /**
   * Closes the session's file helper (the session ended; it goes before the workspace is unmounted).
   * @internal
   */
  async forget(session: Session): Promise<void> {
    for (const controller of this.transfers.get(session) ?? []) controller.abort();
    this.transfers.delete(session);
    const helper = this.helpers.get(session);
    this.helpers.delete(session);
    await helper?.close();
  }

  /** Runs one transfer of `session`, stopped by the caller's signal or the session's end. */
  private async transfer<T>(session: Session, options: TransferOptions, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const done = this.track(session, controller, options.signal);
    try {
      return await run(controller.signal);
    } finally {
      done();
    }
  }

  /** Registers a transfer's controller (aborted with `signal` too); the returned function forgets it. */
  private track(session: Session, controller: AbortController, signal: AbortSignal | undefined): () => void {
    const onAbort = (): void => controller.abort();
    if (signal?.aborted) controller.abort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    let set = this.transfers.get(session);
    if (!set) this.transfers.set(session, (set = new Set()));
    set.add(controller);
    return () => {
      signal?.removeEventListener("abort", onAbort);
      const current = this.transfers.get(session);
      current?.delete(controller);
      if (current?.size === 0) this.transfers.delete(session);
    };
  }

  /** @internal Closes every file helper. */
  async close(): Promise<void> {
    for (const set of this.transfers.values()) for (const controller of set) controller.abort();
    this.transfers.clear();
    const helpers = [...this.helpers.values()];
    this.helpers.clear();
    await Promise.all(helpers.map((helper) => helper.close()));
  }

  /**
   * The session's workspace with its own file helper, kept for FILE_HELPER_IDLE_MS between
   * requests: the check after every call then costs a request, not a helper start (about 20 ms).
   */
  private target(session: Session): WorkspaceTarget {
    let helper = this.helpers.get(session);
    if (!helper) {
      for (const [other, old] of this.helpers) {
        if (!this.sessions.isCurrent(other)) {
          void old.close();
          this.helpers.delete(other);
        }
      }
      helper = new FsHelper(this.runtime, session.workspaceDir, FILE_HELPER_IDLE_MS);
      this.helpers.set(session, helper);
    }
    return { runtime: this.runtime, dir: session.workspaceDir, helper };
  }
}
