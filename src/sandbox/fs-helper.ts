// Starts the file helper (runners/fs_helper.py): one workspace operation done as the sandbox user
// inside fresh bubblewrap namespaces that hold only /usr and that workspace, so the kernel decides.

import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { z } from "zod";
import { SandgateError } from "../errors/index.js";
import { SANDBOX_GID, SANDBOX_UID } from "./bwrap-args.js";
import type { SandboxRuntime } from "./runtime.js";

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
  header: Record<string, unknown> & { ok: boolean; error?: string };
  body: Buffer;
}

const replyHeader = z.object({ ok: z.boolean(), error: z.string().optional() }).passthrough();

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_REPLY = 4 * 1024 * 1024;
/** Helpers running at once; a burst of file calls waits rather than forking without bound. */
const MAX_CONCURRENT = 8;

let running = 0;
const waiting: Array<() => void> = [];

async function slot(): Promise<() => void> {
  if (running >= MAX_CONCURRENT) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  return () => {
    running--;
    waiting.shift()?.();
  };
}

/**
 * util-linux's setpriv gives bubblewrap a parent-death signal: a helper (a deletion can run for
 * minutes) dies with the server instead of outliving it. Without it, close() still kills helpers.
 */
const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv"].find((path) => existsSync(path));

/** The merged-/usr links interpreters need, as in a sandbox. */
const USR_SYMLINKS: Array<[string, string]> = [
  ["usr/bin", "/bin"],
  ["usr/lib", "/lib"],
  ["usr/lib64", "/lib64"],
];

function helperArgv(runtime: SandboxRuntime, workspaceDir: string, seccompFd: number | undefined): string[] {
  const argv = [
    ...(SETPRIV ? [SETPRIV, "--pdeathsig", "KILL", "--"] : []),
    runtime.bwrapPath,
    "--unshare-user",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--uid", String(SANDBOX_UID),
    "--gid", String(SANDBOX_GID),
    "--die-with-parent",
    "--new-session",
    "--cap-drop", "ALL",
    "--disable-userns",
    "--ro-bind", "/usr", "/usr",
  ];
  for (const [target, link] of USR_SYMLINKS) argv.push("--symlink", target, link);
  argv.push("--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache");
  for (const path of runtime.readOnlyPaths) argv.push("--ro-bind", path, path);
  argv.push("--ro-bind", runtime.runnersDir, "/sandgate/runners", "--bind", workspaceDir, "/workspace");
  argv.push("--remount-ro", "/", "--chdir", "/", "--clearenv", "--setenv", "LANG", "C.UTF-8");
  if (seccompFd !== undefined) argv.push("--seccomp", String(seccompFd));
  const entry = runtime.pythonEntry.endsWith(".pyc") ? "/sandgate/runners/fs_helper.pyc" : "/sandgate/runners/fs_helper.py";
  argv.push("--", runtime.interpreters.python, "-I", "-S", "-B", entry);
  return argv;
}

function failed(what: string, detail: string): SandgateError {
  return new SandgateError("SANDBOX_FAILED", `the workspace file helper failed (${what}): ${detail.slice(0, 300)}`);
}

/**
 * Runs one helper operation on the workspace at `workspaceDir` and returns its reply: a header
 * (`ok`, or `error` with the helper's reason) and the raw bytes after it. Rejects with
 * SANDBOX_FAILED when the helper times out, breaks down or answers too much.
 */
export async function runFsHelper(runtime: SandboxRuntime, workspaceDir: string, request: Record<string, unknown>, options: FsHelperOptions = {}): Promise<FsHelperReply> {
  const release = await slot();
  try {
    return await runOnce(runtime, workspaceDir, request, options);
  } finally {
    release();
  }
}

function runOnce(runtime: SandboxRuntime, workspaceDir: string, request: Record<string, unknown>, options: FsHelperOptions): Promise<FsHelperReply> {
  const op = String(request.op);
  const maxReply = options.maxReplyBytes ?? DEFAULT_MAX_REPLY;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const seccompFd = runtime.seccompFile ? openSync(runtime.seccompFile, "r") : undefined;
  const argv = helperArgv(runtime, workspaceDir, seccompFd === undefined ? undefined : 3);
  let child;
  try {
    child = spawn(argv[0]!, argv.slice(1), {
      stdio: ["pipe", "pipe", "pipe", seccompFd ?? "ignore"],
      env: { PATH: "/usr/bin:/bin" },
      ...(runtime.hostUser ? { uid: runtime.hostUser.uid, gid: runtime.hostUser.gid } : {}),
    });
  } finally {
    if (seccompFd !== undefined) closeSync(seccompFd);
  }
  return new Promise<FsHelperReply>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    let stderr = "";
    let problem: SandgateError | undefined;
    const kill = (why: SandgateError): void => {
      problem ??= why;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(() => kill(failed(op, `no answer within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
    const onAbort = (): void => kill(failed(op, "stopped"));
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    (child.stdout as Readable).on("data", (chunk: Buffer) => {
      length += chunk.length;
      if (length > maxReply) kill(failed(op, `the answer is longer than ${maxReply} bytes`));
      else chunks.push(chunk);
    });
    (child.stderr as Readable).on("data", (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString("utf8");
    });
    const stdin = child.stdin as Writable;
    stdin.on("error", () => {
      // EPIPE: the helper refused before reading everything; its reply says why
    });
    child.once("error", (error) => kill(failed(op, error.message)));
    // bubblewrap is gone; a process of its namespace that still holds a pipe (it dies with bubblewrap,
    // but may be slow to) must not keep this call waiting for "close".
    let grace: NodeJS.Timeout | undefined;
    child.once("exit", () => {
      grace = setTimeout(() => {
        for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
      }, 2000);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      clearTimeout(grace);
      options.signal?.removeEventListener("abort", onAbort);
      if (problem) return reject(problem);
      const all = Buffer.concat(chunks);
      const newline = all.indexOf(10);
      let header: FsHelperReply["header"] | undefined;
      if (newline >= 0) {
        try {
          const parsed = replyHeader.safeParse(JSON.parse(all.subarray(0, newline).toString("utf8")));
          if (parsed.success) header = parsed.data;
        } catch {
          // not JSON: reported below
        }
      }
      if (!header) return reject(failed(op, stderr.trim() || `exit ${signal ?? code ?? "?"}, no answer`));
      resolve({ header, body: all.subarray(newline + 1) });
    });
    const line = Buffer.from(`${JSON.stringify(request)}\n`);
    stdin.end(options.input ? Buffer.concat([line, options.input]) : line);
  });
}
