// Streamed upload and download of one workspace file (REST), done by a file helper of its own:
// the upload lands under a temporary name and replaces the file only when whole.

import { SandgateError } from "../errors/index.js";
import { downloadStream, uploadStream, type MinimumRate, type SandboxRuntime, type TransferHeader } from "../sandbox/index.js";
import { refusal, resolveWorkspacePath, type WorkspaceFileLimits } from "./workspace-files.js";
import type { Readable } from "node:stream";

export interface UploadLimits extends WorkspaceFileLimits {
  /** Largest upload, bytes. */
  maxUploadBytes: number;
  /** The workspace is a plain directory: the helper counts the upload against the workspace's size. */
  measure: boolean;
}

export interface TransferTarget {
  runtime: SandboxRuntime;
  dir: string;
  signal?: AbortSignal;
  timeoutMs: number;
  /** The least pace; slower transfers are ended (the sandbox layer's default unless given). */
  minRate?: MinimumRate;
  /** Longest wait for a server-wide transfer place (the sandbox layer's default unless given). */
  placeWaitMs?: number;
}

/** The sandbox layer's options of a transfer to `target`. */
function optionsOf(target: TransferTarget): { timeoutMs: number; signal?: AbortSignal; minRate?: MinimumRate; placeWaitMs?: number } {
  return {
    timeoutMs: target.timeoutMs,
    ...(target.signal ? { signal: target.signal } : {}),
    ...(target.minRate ? { minRate: target.minRate } : {}),
    ...(target.placeWaitMs !== undefined ? { placeWaitMs: target.placeWaitMs } : {}),
  };
}

export interface UploadedFile {
  path: string;
  size: number;
  created: boolean;
}

export interface DownloadedFile {
  path: string;
  /** The file's size on disk; the body's length too unless `guarded`. */
  size: number;
  body: Readable;
  /** The body is tokenized on its way (PII): its length is not known in advance. */
  guarded?: boolean;
}

const mb = (bytes: number): number => Math.round(bytes / 1048576);

/** The error of an upload larger than the admin's cap. */
export function uploadTooLarge(path: string, maxUploadBytes: number): SandgateError {
  return new SandgateError("FILE_TOO_LARGE", `the upload to ${JSON.stringify(path)} is larger than the ${mb(maxUploadBytes)} MB upload limit (limits.maxUploadMb, SANDGATE_MAX_UPLOAD_MB)`, {
    data: { path, limit: maxUploadBytes },
  });
}

function workspaceFull(path: string, limits: WorkspaceFileLimits, inodes: boolean): SandgateError {
  const what = inodes ? `its limit of ${limits.workspaceInodes} files and directories (limits.maxWorkspaceInodes)` : `its ${mb(limits.workspaceBytes)} MB (limits.maxWorkspaceMb)`;
  return new SandgateError("WORKSPACE_FULL", `the workspace has no room for ${JSON.stringify(path)}: the upload would take it past ${what}; nothing was written; delete files first`, {
    data: { path, limit: inodes ? limits.workspaceInodes : limits.workspaceBytes },
  });
}

function uploadRefusal(header: TransferHeader, path: string, limits: UploadLimits): SandgateError {
  const sandboxPath = resolveWorkspacePath(path).sandboxPath;
  switch (header.error) {
    case "quota_bytes":
    case "workspace_full":
      return workspaceFull(sandboxPath, limits, false);
    case "quota_inodes":
      return workspaceFull(sandboxPath, limits, true);
    case "too_large":
      return uploadTooLarge(sandboxPath, limits.maxUploadBytes);
    case undefined:
    default:
      return refusal({ header: { ...header, body: 0 }, body: Buffer.alloc(0) }, path, resolveWorkspacePath(path), limits);
  }
}

/**
 * Streams `source` into the workspace file at `path`, creating missing parents. The file appears
 * whole or not at all: an abort, a cap passed or a full workspace leave nothing behind.
 */
export async function uploadWorkspaceFile(target: TransferTarget, path: string, source: AsyncIterable<Uint8Array>, limits: UploadLimits): Promise<UploadedFile> {
  const r = resolveWorkspacePath(path);
  if (r.segments.length === 0) throw new SandgateError("NOT_A_FILE", "/workspace is the workspace directory; name a file inside it", { data: { path } });
  // "data/" names a directory: never a file called "data".
  if (/\/\.?$/.test(path)) throw new SandgateError("NOT_A_FILE", `${JSON.stringify(path)} names a directory; add the file's name ("data/in.csv")`, { data: { path } });
  const request = {
    segments: r.segments,
    maxBytes: limits.maxUploadBytes,
    workspaceBytes: limits.workspaceBytes,
    workspaceInodes: limits.workspaceInodes,
    measure: limits.measure,
  };
  const header = await uploadStream(target.runtime, target.dir, request, source, optionsOf(target));
  if (!header.ok) throw uploadRefusal(header, path, limits);
  return { path: r.sandboxPath, size: Number(header.size), created: header.created === true };
}

/** Opens the workspace file at `path` as a stream of exactly `size` bytes (any size; FIFOs and links out refused). */
export async function downloadWorkspaceFile(target: TransferTarget, path: string): Promise<DownloadedFile> {
  const r = resolveWorkspacePath(path);
  const reply = await downloadStream(target.runtime, target.dir, { segments: r.segments }, optionsOf(target));
  if (!reply.header.ok || !reply.body) throw refusal({ header: { ...reply.header, ok: false, body: 0 }, body: Buffer.alloc(0) }, path, r, { maxFileBytes: 0, workspaceBytes: 0, workspaceInodes: 0 });
  return { path: r.sandboxPath, size: Number(reply.header.size), body: reply.body };
}
