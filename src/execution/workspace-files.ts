// Host-side file read, write and list confined to one session's workspace directory.
// Everything sandbox code left behind (symlinks, FIFOs, odd names) is treated as hostile.

import { chmodSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, realpathSync, rmdirSync, unlinkSync, writeSync } from "node:fs";
import type { Stats } from "node:fs";
import { dirname, join, sep } from "node:path";
import { SandgateError } from "../errors/index.js";
import { directorySize } from "../util/dir-size.js";

export type FileEncoding = "utf8" | "base64";

export interface WorkspaceFileLimits {
  maxFileBytes: number;
  workspaceBytes: number;
}

export interface WorkspaceEntry {
  name: string;
  path: string;
  type: "file" | "directory" | "symlink" | "other";
  size: number;
  modifiedAt: string;
}

const SANDBOX_ROOT = "/workspace";
const ALLOWED = `use a path relative to the workspace ("data/in.csv") or an absolute path under ${SANDBOX_ROOT}`;
const DEFAULT_LIST_LIMIT = 1000;
// O_NONBLOCK: opening a FIFO left behind must fail or return at once, never wait for a peer.
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK;

interface Resolved {
  hostPath: string;
  sandboxPath: string;
  relative: string;
  segments: string[];
  /** How many leading segments exist on disk. */
  existing: number;
  /** Real path of the deepest existing ancestor (or of the path itself), known to be inside the root. */
  real: string;
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

function resolveInside(root: string, path: string): Resolved {
  if (path.includes("\0")) throw invalid(path, "contains a NUL byte");
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

  const realRoot = realpathSync(root);
  const hostPath = join(root, ...segments);
  let existing = 0;
  while (existing < segments.length) {
    try {
      lstatSync(join(root, ...segments.slice(0, existing + 1)));
    } catch {
      break;
    }
    existing++;
  }
  // A dangling or looping link gets the same answer as an escape, so replies never tell whether a host path exists.
  const escape = invalid(path, "resolves outside the workspace (through a symlink, or a broken one)");
  let real: string;
  try {
    real = realpathSync(join(root, ...segments.slice(0, existing)));
  } catch {
    throw escape;
  }
  if (real !== realRoot && !real.startsWith(realRoot + sep)) throw escape;
  const relative = segments.join("/");
  const sandboxPath = relative === "" ? SANDBOX_ROOT : `${SANDBOX_ROOT}/${relative}`;
  return { hostPath, sandboxPath, relative, segments, existing, real };
}

/** Path as the sandbox sees it: "/workspace/a/b.txt". */
export function resolveWorkspacePath(root: string, path: string): { hostPath: string; sandboxPath: string; relative: string } {
  const { hostPath, sandboxPath, relative } = resolveInside(root, path);
  return { hostPath, sandboxPath, relative };
}

function kindOf(st: Stats): WorkspaceEntry["type"] {
  if (st.isSymbolicLink()) return "symlink";
  if (st.isDirectory()) return "directory";
  return st.isFile() ? "file" : "other";
}

function notFound(r: Resolved): SandgateError {
  const message = `no file or directory at ${show(r.sandboxPath)}; use file_list to see what the workspace holds`;
  return new SandgateError("FILE_NOT_FOUND", message, { data: { path: r.sandboxPath } });
}

function notAFile(r: Resolved, st: Stats): SandgateError {
  const what = st.isDirectory() ? "a directory" : "a special file (FIFO, socket or device)";
  return new SandgateError("NOT_A_FILE", `${show(r.sandboxPath)} is ${what}, not a regular file`, { data: { path: r.sandboxPath } });
}

function tooLarge(r: Resolved, limit: number): SandgateError {
  return new SandgateError("FILE_TOO_LARGE", `${show(r.sandboxPath)} is larger than the ${mb(limit)} file limit`, { data: { path: r.sandboxPath, limit } });
}

export function readWorkspaceFile(
  root: string,
  path: string,
  encoding: FileEncoding,
  limits: WorkspaceFileLimits,
): { path: string; content: string; encoding: FileEncoding; size: number } {
  const r = resolveInside(root, path);
  if (r.existing < r.segments.length) throw notFound(r);
  // r.real holds no symlinks, so O_NOFOLLOW only guards against a swap we were promised cannot happen.
  const before = lstatSync(r.real);
  if (!before.isFile()) throw notAFile(r, before);
  if (before.size > limits.maxFileBytes) throw tooLarge(r, limits.maxFileBytes);
  const fd = openSync(r.real, READ_FLAGS);
  let bytes: Buffer;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notAFile(r, st);
    const buf = Buffer.alloc(Math.min(st.size, limits.maxFileBytes) + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length < buf.length; length += n) n = readSync(fd, buf, length, buf.length - length, null);
    if (length > limits.maxFileBytes) throw tooLarge(r, limits.maxFileBytes);
    bytes = buf.subarray(0, length);
  } finally {
    closeSync(fd);
  }
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
 * Writes a regular file, creating missing parents. A symlink as the final component is refused
 * (PATH_INVALID) even if it points inside: the host never writes through a link the sandbox made.
 */
export function writeWorkspaceFile(
  root: string,
  path: string,
  content: string,
  encoding: FileEncoding,
  limits: WorkspaceFileLimits,
  giveToSandbox?: (hostPath: string) => void,
): { path: string; size: number; created: boolean } {
  const r = resolveInside(root, path);
  const name = r.segments.at(-1);
  if (name === undefined) throw new SandgateError("NOT_A_FILE", `${SANDBOX_ROOT} is the workspace directory; name a file inside it`, { data: { path } });
  const data = encoding === "base64" ? decodeBase64(content, r.sandboxPath) : Buffer.from(content, "utf8");
  if (data.length > limits.maxFileBytes) throw tooLarge(r, limits.maxFileBytes);

  let replaced = 0;
  if (r.existing === r.segments.length) {
    const st = lstatSync(r.hostPath);
    if (st.isSymbolicLink()) throw invalid(path, "is a symlink; the host does not write through symlinks, delete it first");
    if (!st.isFile()) throw notAFile(r, st);
    replaced = st.blocks * 512; // counted the way directorySize counts it
  } else if (!lstatSync(r.real).isDirectory()) {
    throw invalid(path, `goes through ${show(SANDBOX_ROOT + "/" + r.segments.slice(0, r.existing).join("/"))}, which is not a directory`);
  }
  const used = directorySize(root, limits.workspaceBytes + replaced);
  if (used - replaced + data.length > limits.workspaceBytes) {
    throw new SandgateError(
      "FILE_TOO_LARGE",
      `writing ${data.length} bytes to ${show(r.sandboxPath)} would take the workspace over its ${mb(limits.workspaceBytes)} limit; delete files first`,
      { data: { path: r.sandboxPath, limit: limits.workspaceBytes } },
    );
  }

  // Built from real paths from here on, so no component below can be a symlink.
  let dir = r.existing === r.segments.length ? dirname(r.real) : r.real;
  const created = r.existing < r.segments.length;
  const made: string[] = [];
  let fd: number | undefined;
  try {
    for (const segment of r.segments.slice(r.existing, -1)) {
      dir = join(dir, segment);
      mkdirSync(dir, { mode: 0o755 });
      made.push(dir);
      chmodSync(dir, 0o755); // the umask must not decide what the sandbox user may do
    }
    fd = openSync(join(dir, name), WRITE_FLAGS, 0o644);
    if (created) made.push(join(dir, name));
    const st = fstatSync(fd);
    if (!st.isFile()) throw notAFile(r, st);
    if (created) fchmodSync(fd, 0o644);
    for (let off = 0; off < data.length; ) off += writeSync(fd, data, off, data.length - off);
    closeSync(fd);
    fd = undefined;
    for (const p of made) giveToSandbox?.(p);
    return { path: r.sandboxPath, size: data.length, created };
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    // Leave nothing half-made: what this call created goes (deepest first); a replaced file stays as the OS left it.
    for (const p of made.reverse()) {
      try {
        if (lstatSync(p).isDirectory()) rmdirSync(p);
        else unlinkSync(p);
      } catch {
        // gone or not empty
      }
    }
    if (err instanceof SandgateError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw invalid(path, "is a symlink; the host does not write through symlinks, delete it first");
    if (code === "EISDIR" || code === "ENXIO") {
      throw new SandgateError("NOT_A_FILE", `${show(r.sandboxPath)} is not a regular file`, { data: { path: r.sandboxPath }, cause: err });
    }
    throw err;
  }
}

/** One directory level, sorted by the raw bytes of each name; names that are not UTF-8 show with U+FFFD. */
export function listWorkspaceFiles(
  root: string,
  path = "",
  options: { limit?: number } = {},
): { path: string; entries: WorkspaceEntry[]; truncated: boolean } {
  const r = resolveInside(root, path);
  if (r.existing < r.segments.length) throw notFound(r);
  const st = lstatSync(r.real);
  if (!st.isDirectory()) {
    throw new SandgateError("NOT_A_FILE", `${show(r.sandboxPath)} is not a directory; file_list lists directories, file_read reads files`, { data: { path: r.sandboxPath } });
  }
  const limit = Math.max(0, Math.floor(options.limit ?? DEFAULT_LIST_LIMIT));
  // Buffers, not strings: a name that is not UTF-8 would not round-trip through a string to lstat.
  const names = readdirSync(r.real, { encoding: "buffer" }).sort((a, b) => Buffer.compare(a, b));
  const base = Buffer.from(r.real + sep);
  const entries: WorkspaceEntry[] = [];
  for (const raw of names.slice(0, limit)) {
    let entry: Stats;
    try {
      entry = lstatSync(Buffer.concat([base, raw]));
    } catch {
      continue; // removed while we looked
    }
    const name = raw.toString("utf8");
    const type = kindOf(entry);
    const sandboxPath = r.relative === "" ? `${SANDBOX_ROOT}/${name}` : `${r.sandboxPath}/${name}`;
    entries.push({ name, path: sandboxPath, type, size: type === "file" ? entry.size : 0, modifiedAt: entry.mtime.toISOString() });
  }
  return { path: r.sandboxPath, entries, truncated: names.length > limit };
}
