// Streamed REST file transfers: a raw or multipart request body counted against the upload cap
// as it arrives and fed to the workspace, and a file sent back as a stream with safe headers.

import { Readable } from "node:stream";
import type { Socket } from "node:net";
import type { Context } from "hono";
import { SandgateError } from "../../errors/index.js";
import type { UploadedFile } from "../../execution/index.js";
import type { ServerContext } from "../context.js";
import { isPassiveType, mimeTypeOf } from "../../features/files/index.js";
import { boundaryOf, formParts } from "./multipart.js";

/** The whole transfer's deadline; a sender silent for server.bodyTimeoutS is cut off sooner. */
export const TRANSFER_TIMEOUT_MS = 3600_000;
const MIB = 1024 * 1024;

/**
 * A REST transfer's bounds besides its deadline: it must move 16 KiB within every three body
 * timeouts (30 s by default) or it ends, and it waits at most two of those windows for a place.
 * Slow or stalled clients so cannot hold the server's transfer places from everyone else.
 */
function transferBounds(ctx: ServerContext): { timeoutMs: number; minRate: { bytes: number; windowMs: number }; placeWaitMs: number } {
  const windowMs = 3 * ctx.config.server.bodyTimeoutS * 1000;
  return { timeoutMs: TRANSFER_TIMEOUT_MS, minRate: { bytes: 16 * 1024, windowMs }, placeWaitMs: 2 * windowMs };
}

/**
 * Whether a PUT of file content carries the file's raw bytes: a `path` query parameter and a body
 * not declared JSON. Anything else is the JSON form of file_write.
 */
export function isRawUpload(c: Context): boolean {
  return c.req.query("path") !== undefined && !/^application\/json\s*(;|$)/i.test(c.req.header("content-type") ?? "");
}

/** Whether a download asks for today's JSON shape ({path, content, encoding, size}) instead of the bytes. */
export function wantsJson(c: Context, encoding: string | undefined): boolean {
  return encoding !== undefined || /\bapplication\/json\b/i.test(c.req.header("accept") ?? "");
}

function tooLarge(maxBytes: number): SandgateError {
  return new SandgateError("FILE_TOO_LARGE", `the upload is larger than the ${Math.round(maxBytes / MIB)} MB upload limit (limits.maxUploadMb, SANDGATE_MAX_UPLOAD_MB)`, {
    data: { limit: maxBytes },
  });
}

type ReadResult = { done: true; value?: Uint8Array } | { done: false; value: Uint8Array };

/** The request body as chunks, failing past `maxBytes`, after `stallMs` without a byte, or when the client leaves. */
async function* bounded(c: Context, maxBytes: number, stallMs: number, progress: { complete: boolean }): AsyncGenerator<Uint8Array> {
  const body = c.req.raw.body;
  if (!body) {
    progress.complete = true;
    return;
  }
  const reader: ReadableStreamDefaultReader<Uint8Array> = body.getReader();
  const signal = c.req.raw.signal;
  let size = 0;
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      const stop = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new SandgateError("REQUEST_TIMEOUT", `the upload stalled: no byte for ${Math.round(stallMs / 1000)} s (server.bodyTimeoutS); nothing was written`)),
          stallMs,
        );
        onAbort = () => reject(new SandgateError("REQUEST_TIMEOUT", "the client went away during the upload; nothing was written"));
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      });
      try {
        const next: ReadResult = await Promise.race([reader.read(), stop]);
        if (next.done) {
          progress.complete = true;
          return;
        }
        size += next.value.length;
        if (size > maxBytes) throw tooLarge(maxBytes);
        yield next.value;
      } finally {
        clearTimeout(timer);
        if (onAbort) signal.removeEventListener("abort", onAbort);
      }
    }
  } finally {
    if (!progress.complete) void reader.cancel().catch(() => undefined);
  }
}

/** What is left of a body that failed part-way will not be read: the connection goes after the answer. */
function closeAfter(c: Context): void {
  c.header("connection", "close");
  const socket = (c.env as { incoming?: { socket?: Socket } } | undefined)?.incoming?.socket;
  if (socket) setTimeout(() => socket.destroySoon(), 100).unref();
}

interface Upload {
  c: Context;
  ctx: ServerContext;
  sessionId: string;
  owner: string;
}

/** Runs `work` over the bounded body; a Content-Length past the cap is refused before anything starts. */
async function withBody<T>({ c, ctx }: Upload, work: (body: AsyncIterable<Uint8Array>, maxBytes: number) => Promise<T>): Promise<T> {
  const maxBytes = ctx.config.limits.maxUploadMb * MIB;
  const declared = c.req.header("content-length");
  const progress = { complete: false };
  try {
    if (declared !== undefined && !c.req.raw.headers.has("transfer-encoding") && Number(declared) > maxBytes) throw tooLarge(maxBytes);
    return await work(bounded(c, maxBytes, ctx.config.server.bodyTimeoutS * 1000, progress), maxBytes);
  } catch (error) {
    if (!progress.complete) closeAfter(c);
    throw error;
  }
}

/** PUT /sessions/{id}/files/content?path= with the file's bytes as the body. */
export function uploadRaw(upload: Upload, path: string): Promise<UploadedFile> {
  const { c, ctx, sessionId, owner } = upload;
  return withBody(upload, (body, maxBytes) =>
    ctx.engine.files.upload(sessionId, path, body, maxBytes, { owner, signal: c.req.raw.signal, ...transferBounds(ctx) }),
  );
}

/** Joins an upload directory and a client's file name into a workspace path. */
function targetOf(dir: string | undefined, name: string): string {
  const base = dir === undefined || dir === "" ? "" : dir.replace(/\/+$/, "");
  return base === "" ? name : `${base}/${name}`;
}

/**
 * POST /sessions/{id}/files, multipart/form-data: each file part is written to the text field
 * `path` sent just before it (under its file name when `path` ends in "/"), else to its file name under `dir`. One file after another, each whole or not at all.
 */
export function uploadMultipart(upload: Upload, dir: string | undefined): Promise<{ files: UploadedFile[] }> {
  const { c, ctx, sessionId, owner } = upload;
  const boundary = boundaryOf(c.req.header("content-type"));
  if (!boundary) {
    return Promise.reject(new SandgateError("INVALID_INPUT", "POST /sessions/{id}/files takes multipart/form-data with a boundary; to send one file's bytes, PUT /sessions/{id}/files/content?path=..."));
  }
  return withBody(upload, async (body, maxBytes) => {
    const files: UploadedFile[] = [];
    let nextPath: string | undefined;
    for await (const part of formParts(body, boundary)) {
      if (part.filename === undefined) {
        if (part.name !== "path") throw new SandgateError("INVALID_INPUT", `unknown form field ${JSON.stringify(part.name.slice(0, 64))}; send file parts, each optionally after a "path" field`);
        const chunks: Uint8Array[] = [];
        let size = 0;
        for await (const chunk of part.body) {
          size += chunk.length;
          if (size > 4096) throw new SandgateError("INVALID_INPUT", "the path field is longer than 4096 bytes");
          chunks.push(chunk);
        }
        nextPath = Buffer.concat(chunks).toString("utf8");
        continue;
      }
      // A path field ending in "/" is a directory: the part goes there under its file name.
      const path = nextPath === undefined ? targetOf(dir, part.filename) : nextPath.endsWith("/") ? targetOf(nextPath, part.filename) : nextPath;
      nextPath = undefined;
      if (path === "") throw new SandgateError("INVALID_INPUT", "a file part has neither a file name nor a path field before it");
      const left = maxBytes - files.reduce((sum, f) => sum + f.size, 0);
      files.push(await ctx.engine.files.upload(sessionId, path, part.body, left, { owner, signal: c.req.raw.signal, ...transferBounds(ctx) }));
    }
    if (files.length === 0) throw new SandgateError("INVALID_INPUT", "the form holds no file part");
    return { files };
  });
}

/** GET /sessions/{id}/files/content?path= as the file's bytes, streamed, never rendered as active content. */
export async function downloadFile(c: Context, ctx: ServerContext, sessionId: string, path: string, owner: string): Promise<Response> {
  const file = await ctx.engine.files.download(sessionId, path, { owner, signal: c.req.raw.signal, ...transferBounds(ctx) });
  const type = mimeTypeOf(file.path);
  const name = file.path.slice(file.path.lastIndexOf("/") + 1);
  const headers: Record<string, string> = {
    "content-type": type,
    // A tokenized body (PII) has a length of its own: sent chunked.
    ...(file.guarded ? {} : { "content-length": String(file.size) }),
    "x-content-type-options": "nosniff",
    "content-security-policy": "sandbox; default-src 'none'",
    "cache-control": "no-store",
    "content-disposition": `${isPassiveType(type) ? "inline" : "attachment"}; filename*=UTF-8''${encodeURIComponent(name)}`,
  };
  if (c.req.method === "HEAD") {
    // No body will be read: the helper and the caller's transfer place go now, not after the stall timeout.
    file.body.destroy();
    return new Response(null, { status: 200, headers });
  }
  return new Response(Readable.toWeb(file.body) as ReadableStream<Uint8Array>, { status: 200, headers });
}
