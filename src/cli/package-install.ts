// The host-side steps of `sandgate packages sync`: child processes (venv, pip, apt-get, npm) run
// from argv arrays with an allowlisted environment, their output forwarded as progress.

import { spawn } from "node:child_process";
import { childrenOf } from "../sandbox/runner-signal.js";

/** Where progress lines go (stderr in the CLI, never stdout). */
export type Progress = (line: string) => void;

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

// Proxies and certificates an admin may need for the registry; nothing else of the host's environment.
const PASSED_ENV = /^(PATH|HOME|LANG|LC_ALL|TMPDIR|https?_proxy|HTTPS?_PROXY|no_proxy|NO_PROXY|SSL_CERT_FILE|SSL_CERT_DIR|NODE_EXTRA_CA_CERTS|REQUESTS_CA_BUNDLE|npm_config_registry|NPM_CONFIG_REGISTRY)$/;

/** The environment every installer runs with: the allowlisted variables of `host` (this process's unless given), then `extra`. */
export function installerEnv(extra: Record<string, string> = {}, host: Record<string, string | undefined> = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(host)) if (value !== undefined && PASSED_ENV.test(key)) env[key] = value;
  env.PATH ??= "/usr/bin:/bin";
  return { ...env, ...extra };
}

const MAX_KEPT = 256 * 1024;

/**
 * Runs argv to its end (or kills it after `timeoutMs`), forwarding its output lines as progress;
 * keeps the last 256 KiB of each stream for the caller's messages.
 */
export function runInstaller(argv: string[], options: { env?: Record<string, string>; cwd?: string; timeoutMs: number; progress?: Progress }): Promise<RunResult> {
  const [file, ...args] = argv;
  if (file === undefined) throw new Error("runInstaller needs a program");
  return new Promise((resolve) => {
    const child = spawn(file, args, { env: options.env ?? installerEnv(), cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const partial = { stdout: "", stderr: "" };
    // What the installer started (apt-get's methods, dpkg) goes with it: one that held its pipes open would hold the sync.
    const timer = setTimeout(() => killTree(child.pid), options.timeoutMs);
    const forward = (stream: "stdout" | "stderr", chunk: string): void => {
      const lines = (partial[stream] + chunk).split("\n");
      partial[stream] = lines.pop() ?? "";
      for (const line of lines) if (line.trim() !== "") options.progress?.(`  ${line}`);
    };
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout = (stdout + chunk).slice(-MAX_KEPT);
      forward("stdout", chunk);
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-MAX_KEPT);
      forward("stderr", chunk);
    });
    const finish = (code: number | null, extra = ""): void => {
      clearTimeout(timer);
      for (const rest of [partial.stdout, partial.stderr]) if (rest.trim() !== "") options.progress?.(`  ${rest}`);
      resolve({ code, stdout, stderr: stderr + extra });
    };
    child.on("error", (error) => finish(null, `\n${file}: ${error.message}`));
    child.on("close", (code, signal) => finish(code, signal === "SIGKILL" ? `\n${file} was stopped after ${Math.round(options.timeoutMs / 1000)} s` : ""));
  });
}

/** SIGKILLs a process and its descendants (all found before any is killed, so none is missed by being reparented). */
function killTree(pid: number | undefined): void {
  if (pid === undefined) return;
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...childrenOf(tree[i] as number));
  for (const member of tree) {
    try {
      process.kill(member, "SIGKILL");
    } catch {
      // gone already
    }
  }
}

/** The last lines a failed installer printed that say why (pip's and npm's ERROR lines first). */
export function failureReason(result: RunResult): string {
  const lines = `${result.stderr}\n${result.stdout}`.split("\n").map((l) => l.trim()).filter(Boolean);
  const errors = lines.filter((l) => /^(ERROR|npm (ERR!|error))/.test(l));
  return (errors.length > 0 ? errors : lines).slice(-3).join(" / ") || `exit status ${String(result.code)}`;
}
