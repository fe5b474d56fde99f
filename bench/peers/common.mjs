// What every peer of the side-by-side benchmark shares: the upstream MCP server (server-everything,
// stdio), a direct SDK client as the baseline, the snippets and probes, and small process helpers.

import { spawn } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export const ROOT = join(import.meta.dirname, "../..");
export const NODE = process.execPath;
export const SERVER_JS = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
/** The upstream server every peer calls: the reference `everything` server over stdio. */
export const ECHO_SERVER = { command: NODE, args: [SERVER_JS, "stdio"] };
export const CALLS = 100;
export const PYTHON = "/usr/bin/python3";

/** A direct MCP SDK client of its own server-everything process. */
export async function connectEcho(name = "bench-peers") {
  const client = new Client({ name, version: "bench" });
  const transport = new StdioClientTransport({ ...ECHO_SERVER, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, stderr: "ignore" });
  await client.connect(transport);
  return client;
}

export const echoText = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

/** The baseline: `n` echo calls from a direct SDK client, timed like the programs time theirs. */
export async function directLoop(client, n = CALLS) {
  const t0 = performance.now();
  let r;
  for (let i = 0; i < n; i++) r = await client.callTool({ name: "echo", arguments: { message: "hi" } });
  const loopMs = performance.now() - t0;
  if (echoText(r) !== "Echo: hi") throw new Error(`direct echo: ${JSON.stringify(r)}`);
  return { loopMs };
}

/** Throws unless a trivial snippet printed (or returned) 2. */
export function expectTwo(out, who) {
  if (String(out).trim() !== "2") throw new Error(`${who}: expected 2, got ${JSON.stringify(String(out).slice(0, 300))}`);
}

/** Parses the one JSON line a program printed last. */
export function lastJson(stdout, who) {
  const line = String(stdout).trim().split("\n").pop();
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`${who}: no JSON result in ${JSON.stringify(String(stdout).slice(-300))}`);
  }
}

/**
 * The isolation probe in Python: read a root-only host file, open TCP to a listener on the host's
 * loopback, look for the bench process, create a Unix socket. Prints one JSON line.
 * The 600 MB allocation runs on its own (memoryAttempt): a peer that kills the program for it must
 * not take the other answers along.
 */
export function pythonProbe({ port, benchPid }) {
  return [
    "import json, os, socket",
    "out = {}",
    "def attempt(key, fn):",
    "    try:",
    "        out[key] = fn()",
    "    except BaseException as e:",
    '        out[key] = "blocked: " + type(e).__name__ + (" " + str(e.args[1]) if len(getattr(e, "args", ())) > 1 else "")',
    'attempt("file", lambda: "read %d bytes" % len(open("/etc/shadow").read()))',
    "def net():",
    "    s = socket.create_connection(('127.0.0.1', " + port + "), timeout=3)",
    "    s.close()",
    '    return "connected"',
    'attempt("net", net)',
    "def procs():",
    '    path = "/proc/' + benchPid + '/cmdline"',
    '    if os.path.exists(path) and b"node" in open(path, "rb").read():',
    '        return "sees the bench process"',
    '    return "bench process not visible (%d pids in /proc)" % len([p for p in os.listdir("/proc") if p.isdigit()])',
    'attempt("procs", procs)',
    'attempt("unix", lambda: socket.socket(socket.AF_UNIX).close() or "created")',
    "print(json.dumps(out))",
  ].join("\n");
}

/** Allocates 600 MB (and writes it) with `runPython`, a function that runs Python code and returns its stdout. */
export async function memoryAttempt(runPython) {
  try {
    const out = String(await runPython('print(len(b"x" * (600 << 20)) >> 20)')).trim();
    return out === "600" ? "allocated 600 MB" : `unexpected output ${JSON.stringify(out.slice(0, 80))}`;
  } catch (e) {
    return `blocked: ${String(e?.message ?? e).split("\n")[0].slice(0, 160)}`;
  }
}

/** The same questions asked of a JavaScript isolate; `tryFetch` where the runtime has fetch. */
export function jsProbe({ port }) {
  return `
    const out = {};
    const g = globalThis;
    out.file = typeof g.process !== "undefined" || typeof g.require !== "undefined" || typeof g.Deno !== "undefined" ? "has a host API" : "no fs API (process, require undefined)";
    try { out.escape = typeof (function () { return this; }).constructor("return process")(); } catch (e) { out.escape = "blocked: " + e.message; }
    if (typeof g.fetch === "function") {
      try { const r = await fetch("http://127.0.0.1:${port}/"); out.net = "connected: HTTP " + r.status; } catch (e) { out.net = "blocked: " + e.message; }
    } else out.net = "no network API (fetch undefined)";
    out.procs = "no process API";
    try { out.memory = "allocated " + (new Uint8Array(600 << 20).fill(1).length >> 20) + " MB"; } catch (e) { out.memory = "blocked: " + e.message; }
    out.unix = "no socket API";
    return JSON.stringify(out);
  `;
}

/** Runs argv to completion; resolves with stdout, rejects on a non-zero exit. Kills it at `timeoutMs`. */
export function run(argv, { timeoutMs = 60_000, shell = false, cwd } = {}) {
  return new Promise((resolve, reject) => {
    const child = shell ? spawn(argv, { shell: true, cwd, stdio: ["ignore", "pipe", "pipe"] }) : spawn(argv[0], argv.slice(1), { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (err += c));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`exit ${code ?? signal}: ${err.slice(-400)}`));
    });
  });
}

/** Wall time of `fn`, ms. */
export async function timed(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}
