// File read, write, list, usage and deletion for one session's workspace. Paths are checked here
// as strings; every touch of the tree is done by the file helper as the sandbox user, never by us.

import { SandgateError } from "../errors/index.js";
import { runFsHelper, type FsHelper, type FsHelperOptions, type FsHelperReply, type SandboxRuntime } from "../sandbox/index.js";

export type FileEncoding = "utf8" | "base64";

export interface WorkspaceFileLimits {
  maxFileBytes: number;
  workspaceBytes: number;
  /** Files, directories and links the workspace may hold. */
  workspaceInodes: number;
}

export interface WorkspaceEntry {
  name: string;
  path: string;
  type: "file" | "directory" | "symlink" | "other";
  size: number;
  modifiedAt: string;
}

/** The workspace a file operation works on: its host directory and the runtime that starts the helper. */
export interface WorkspaceTarget {
  runtime: SandboxRuntime;
  dir: string;
  /** A helper kept for this workspace; without it each operation starts one of its own. */
  helper?: FsHelper;
}

function call(target: WorkspaceTarget, request: Record<string, unknown>, options: FsHelperOptions = {}): Promise<FsHelperReply> {
  return target.helper ? target.helper.run(request, options) : runFsHelper(target.runtime, target.dir, request, options);
}

export interface WorkspaceUsage {
  /** File and directory blocks, bytes (counted up to the first limit passed). */
  bytes: number;
  inodes: number;
  /** Either limit was passed (the walk stopped there). */
  over: boolean;
}

const SANDBOX_ROOT = "/workspace";
const ALLOWED = `use a path relative to the workspace ("data/in.csv") or an absolute path under ${SANDBOX_ROOT}`;
const DEFAULT_LIST_LIMIT = 1000;
/** Longest answer of a listing: hex names of up to 255 bytes plus a little per entry. */
const LIST_BYTES_PER_ENTRY = 700;
/** A usage walk or a deletion of 100,000+ entries takes seconds, not minutes. */
const WALK_TIMEOUT_MS = 300_000;

interface Resolved {
  sandboxPath: string;
  relative: string;
  segments: string[];
}

/** Paths are shown quoted and cut short: they may hold NULs, newlines or 4 KB of junk. */
function show(path: string): string {
  return JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
}

function mb(bytes: number): string {
  return `${Number((bytes / 1048576).toFixed(2))} MB`;
}

function invalid(path: string, why: string): SandgateError {
  return new SandgateError("PATH_INVALID", `path ${show(path)} ${why}; ${ALLOWED}`, { data: { path } });
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Path as the sandbox sees it: "/workspace/a/b.txt". Pure string checks; nothing on disk is touched. */
export function resolveWorkspacePath(path: string): Resolved {
  if (path.includes("\0")) throw invalid(path, "contains a NUL byte");
  // A lone UTF-16 surrogate has no file name to stand for (JSON allows it, UTF-8 does not).
  if (LONE_SURROGATE.test(path)) throw invalid(path, "is not valid Unicode (a lone surrogate)");
  if (Buffer.byteLength(path) > 4096) throw invalid(path, "is longer than 4096 bytes");
  let rest = path;
  if (path.startsWith("/")) {
    if (path !== SANDBOX_ROOT && !path.startsWith(`${SANDBOX_ROOT}/`)) throw invalid(path, `is absolute but not under ${SANDBOX_ROOT}`);
    rest = path.slice(SANDBOX_ROOT.length);
  }
  const segments = rest.split("/").filter((s) => s !== "" && s !== ".");
  // Rejected rather than normalized: "a/../b" is almost always a mistake or a probe.
  if (segments.includes("..")) throw invalid(path, 'contains a ".." segment');
  if (segments.some((s) => Buffer.byteLength(s) > 255)) throw invalid(path, "has a component longer than 255 bytes");
  const relative = segments.join("/");
  const sandboxPath = relative === "" ? SANDBOX_ROOT : `${SANDBOX_ROOT}/${relative}`;
  return { sandboxPath, relative, segments };
}

function notFound(r: Resolved): SandgateError {
  const message = `no file or directory at ${show(r.sandboxPath)}; use file_list to see what the workspace holds`;
  return new SandgateError("FILE_NOT_FOUND", message, { data: { path: r.sandboxPath } });
}

function notAFile(r: Resolved, what: unknown): SandgateError {
  const kind = what === "directory" ? "a directory" : "a special file (FIFO, socket or device)";
  return new SandgateError("NOT_A_FILE", `${show(r.sandboxPath)} is ${kind}, not a regular file`, { data: { path: r.sandboxPath } });
}

function tooLarge(r: Resolved, limit: number): SandgateError {
  return new SandgateError("FILE_TOO_LARGE", `${show(r.sandboxPath)} is larger than the ${mb(limit)} file limit`, { data: { path: r.sandboxPath, limit } });
}

function detail(header: FsHelperReply["header"]): string {
  return typeof header.message === "string" ? header.message : String(header.error ?? "no reason given");
}

/** The helper's refusals as today's errors; anything else it reports is a breakdown. */
export function refusal(reply: FsHelperReply, path: string, r: Resolved, limits: WorkspaceFileLimits, size = 0): SandgateError {
  const { header } = reply;
  switch (header.error) {
    // A dangling or looping link gets the same answer as an escape, so replies never tell whether a host path exists.
    case "escape":
      return invalid(path, "resolves outside the workspace (through a symlink, or a broken one)");
    case "not_found":
      return notFound(r);
    case "not_a_file":
      return notAFile(r, header.what);
    case "not_a_dir":
      return new SandgateError("NOT_A_FILE", `${show(r.sandboxPath)} is not a directory; file_list lists directories, file_read reads files`, { data: { path: r.sandboxPath } });
    case "too_large":
      return tooLarge(r, limits.maxFileBytes);
    case "symlink":
      return invalid(path, "is a symlink; the host does not write through symlinks, delete it first");
    case "not_dir": {
      const existing = typeof header.existing === "number" ? header.existing : 0;
      return invalid(path, `goes through ${show(SANDBOX_ROOT + "/" + r.segments.slice(0, existing).join("/"))}, which is not a directory`);
    }
    case "quota_bytes":
      return new SandgateError(
        "FILE_TOO_LARGE",
        `writing ${size} bytes to ${show(r.sandboxPath)} would take the workspace over its ${mb(limits.workspaceBytes)} limit; delete files first`,
        { data: { path: r.sandboxPath, limit: limits.workspaceBytes } },
      );
    case "quota_inodes":
      return new SandgateError(
        "FILE_TOO_LARGE",
        `writing ${show(r.sandboxPath)} would take the workspace over its limit of ${limits.workspaceInodes} files and directories; delete some first`,
        { data: { path: r.sandboxPath, limit: limits.workspaceInodes } },
      );
    case undefined:
    default:
      return new SandgateError("SANDBOX_FAILED", `the workspace file helper could not work on ${show(r.sandboxPath)}: ${detail(header)}`, { data: { path: r.sandboxPath } });
  }
}

export async function readWorkspaceFile(
  target: WorkspaceTarget,
  path: string,
  encoding: FileEncoding,
  limits: WorkspaceFileLimits,
): Promise<{ path: string; content: string; encoding: FileEncoding; size: number }> {
  const r = resolveWorkspacePath(path);
  const reply = await call(target, { op: "read", segments: r.segments, maxBytes: limits.maxFileBytes }, { maxReplyBytes: limits.maxFileBytes + 4096 });
  if (!reply.header.ok) throw refusal(reply, path, r, limits);
  const bytes = reply.body;
  if (bytes.length !== reply.header.size) throw new SandgateError("SANDBOX_FAILED", `the workspace file helper sent a short read of ${show(r.sandboxPath)}`);
  if (encoding === "base64") return { path: r.sandboxPath, content: bytes.toString("base64"), encoding, size: bytes.length };
  try {
    return { path: r.sandboxPath, content: new TextDecoder("utf-8", { fatal: true }).decode(bytes), encoding, size: bytes.length };
  } catch (cause) {
    throw new SandgateError("INVALID_INPUT", `${show(r.sandboxPath)} is not valid UTF-8; read it with encoding "base64"`, { data: { path: r.sandboxPath }, cause });
  }
}

/** Standard alphabet, "=" padding optional but never misplaced; ASCII whitespace (line wrapping) ignored. */
function decodeBase64(content: string, path: string): Buffer {
  const compact = content.replace(/[ \t\r\n]/g, "");
  const body = compact.replace(/={1,2}$/, "");
  const padded = body.length !== compact.length;
  if (!/^[A-Za-z0-9+/]*$/.test(body) || body.length % 4 === 1 || (padded && compact.length % 4 !== 0)) {
    throw new SandgateError("INVALID_INPUT", `content for ${show(path)} is not valid base64 (standard alphabet A-Z a-z 0-9 + /, "=" padding)`, { data: { path } });
  }
  return Buffer.from(body, "base64");
}

/**
 * Writes a regular file, creating missing parents (0755; the file 0644, both the sandbox user's).
 * A symlink as the final component is refused (PATH_INVALID) even if it points inside.
 */
export async function writeWorkspaceFile(
  target: WorkspaceTarget,
  path: string,
  content: string,
  encoding: FileEncoding,
  limits: WorkspaceFileLimits,
): Promise<{ path: string; size: number; created: boolean }> {
  const r = resolveWorkspacePath(path);
  if (r.segments.length === 0) throw new SandgateError("NOT_A_FILE", `${SANDBOX_ROOT} is the workspace directory; name a file inside it`, { data: { path } });
  const data = encoding === "base64" ? decodeBase64(content, r.sandboxPath) : Buffer.from(content, "utf8");
  if (data.length > limits.maxFileBytes) throw tooLarge(r, limits.maxFileBytes);
  const request = { op: "write", segments: r.segments, size: data.length, workspaceBytes: limits.workspaceBytes, workspaceInodes: limits.workspaceInodes };
  const reply = await call(target, request, { input: data, timeoutMs: WALK_TIMEOUT_MS });
  if (!reply.header.ok) throw refusal(reply, path, r, limits, data.length);
  return { path: r.sandboxPath, size: data.length, created: reply.header.created === true };
}

interface RawEntry {
  name: string;
  type: WorkspaceEntry["type"];
  size: number;
  mtimeMs: number;
}

/** One directory level, sorted by the raw bytes of each name; names that are not UTF-8 show with U+FFFD. */
export async function listWorkspaceFiles(
  target: WorkspaceTarget,
  path = "",
  options: { limit?: number } = {},
): Promise<{ path: string; entries: WorkspaceEntry[]; truncated: boolean }> {
  const r = resolveWorkspacePath(path);
  const limit = Math.max(0, Math.floor(options.limit ?? DEFAULT_LIST_LIMIT));
  const reply = await call(target, { op: "list", segments: r.segments, limit }, { maxReplyBytes: 4096 + limit * LIST_BYTES_PER_ENTRY });
  // Limits only word errors the listing cannot produce; none apply here.
  if (!reply.header.ok) throw refusal(reply, path, r, { maxFileBytes: 0, workspaceBytes: 0, workspaceInodes: 0 });
  const raw = Array.isArray(reply.header.entries) ? (reply.header.entries as RawEntry[]) : [];
  const entries = raw.map((e) => {
    // Hex on the wire: Node's own UTF-8 decoding decides how a bad name shows.
    const name = Buffer.from(String(e.name), "hex").toString("utf8");
    const sandboxPath = r.relative === "" ? `${SANDBOX_ROOT}/${name}` : `${r.sandboxPath}/${name}`;
    return { name, path: sandboxPath, type: e.type, size: Number(e.size), modifiedAt: new Date(Number(e.mtimeMs)).toISOString() };
  });
  return { path: r.sandboxPath, entries, truncated: reply.header.truncated === true };
}

/** What the workspace holds, walked until a limit is passed. */
export async function workspaceUsage(target: WorkspaceTarget, limits: Pick<WorkspaceFileLimits, "workspaceBytes" | "workspaceInodes">): Promise<WorkspaceUsage> {
  const request = { op: "usage", workspaceBytes: limits.workspaceBytes, workspaceInodes: limits.workspaceInodes };
  const reply = await call(target, request, { timeoutMs: WALK_TIMEOUT_MS });
  if (!reply.header.ok) throw new SandgateError("SANDBOX_FAILED", `the workspace file helper could not measure the workspace: ${detail(reply.header)}`);
  return { bytes: Number(reply.header.bytes), inodes: Number(reply.header.inodes), over: reply.header.over === true };
}

/** Empties the workspace (any depth, any count, directories the code made unreadable included). */
export async function emptyWorkspace(target: WorkspaceTarget, signal?: AbortSignal): Promise<number> {
  // No time limit: a slow disk takes minutes for 150,000 directories, and every entry removed stays removed.
  const reply = await call(target, { op: "delete" }, { timeoutMs: 24 * 3600_000, ...(signal ? { signal } : {}) });
  if (!reply.header.ok) throw new SandgateError("SANDBOX_FAILED", `the workspace file helper could not empty the workspace: ${detail(reply.header)}`);
  return Number(reply.header.removed);
}

/** What a copy of one workspace into another (a session's fork) moved. */
export interface WorkspaceCopy {
  files: number;
  directories: number;
  links: number;
  fifos: number;
  /** Sockets, and files or directories the sandbox user cannot read: not copied. */
  skipped: number;
  bytes: number;
}

/**
 * Copies the workspace at `sourceDir` into `target` (an empty one) as the sandbox user, with the
 * source read-only and links copied as links; the copy may hold no more than `limits` allow.
 */
export async function copyWorkspace(target: Omit<WorkspaceTarget, "helper">, sourceDir: string, limits: Pick<WorkspaceFileLimits, "workspaceBytes" | "workspaceInodes">): Promise<WorkspaceCopy> {
  const request = { op: "copy_from", workspaceBytes: limits.workspaceBytes, workspaceInodes: limits.workspaceInodes };
  const reply = await runFsHelper(target.runtime, target.dir, request, { timeoutMs: WALK_TIMEOUT_MS, source: sourceDir });
  const { header } = reply;
  if (header.ok) {
    const count = (name: string): number => (typeof header[name] === "number" ? header[name] : 0);
    return { files: count("files"), directories: count("directories"), links: count("links"), fifos: count("fifos"), skipped: count("skipped"), bytes: count("bytes") };
  }
  const limitsText = `${mb(limits.workspaceBytes)} and ${limits.workspaceInodes} files and directories`;
  switch (header.error) {
    case "over":
    case "workspace_full":
      throw new SandgateError("WORKSPACE_FULL", `the session's workspace holds more than a new session may (${limitsText}); delete files in it, then fork again`, {
        data: { limit: limits.workspaceBytes, inodes: limits.workspaceInodes },
      });
    case "too_deep":
      throw new SandgateError("WORKSPACE_FULL", "the session's workspace nests directories too deep to copy; flatten it, then fork again");
    case undefined:
    default:
      throw new SandgateError("SANDBOX_FAILED", `the workspace file helper could not copy the workspace: ${detail(header)}`);
  }
}
