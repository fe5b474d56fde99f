// npm run conformance: the official MCP conformance suite (@modelcontextprotocol/conformance)
// against a real `sandgate serve` on port 0, one run per scenario; prints a summary table.
//
// Usage: node scripts/conformance.mjs [--all] [--verbose] [--output-dir DIR]
//   --all         also run every other server scenario `conformance list --server` names, as
//                 information only (most need test-only tools such as test_simple_text)
//   --verbose     stream the suite's and the server's own output to stderr
//   --output-dir  keep each scenario's checks.json under DIR instead of a temp dir
// Needs `npm run build` first. Exit code: 0 when every required scenario passes, 1 when one
// fails or the server dies, 2 on bad usage or a missing build, 130 on SIGINT.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const REQUIRED = [
  "server-initialize",
  "ping",
  "tools-list",
  "logging-set-level",
  "resources-list",
  "prompts-list",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
];
const STARTUP_TIMEOUT_MS = 20_000;
// A backstop for a wedged suite: the suite's own requests give up after 60 s and report it.
const SCENARIO_TIMEOUT_MS = 150_000;
const STOP_GRACE_MS = 5_000;
const TAIL_BYTES = 16_384;
// The server and the suite see only these from our environment, so a developer's
// SANDGATE_API_KEY, SANDGATE_CONFIG or proxy settings cannot change the result.
const ENV_ALLOWLIST = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"];

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const MAIN = join(ROOT, "dist", "cli", "main.js");
const SUITE = join(ROOT, "node_modules", ".bin", "conformance");

/** A failure to report as one line, without a stack: bad usage (exit 2) or a broken setup (exit 1). */
class Failure extends Error {
  constructor(message, exitCode) {
    super(message);
    this.exitCode = exitCode;
  }
}

function options() {
  try {
    const { values } = parseArgs({
      options: {
        all: { type: "boolean", default: false },
        verbose: { type: "boolean", default: false },
        "output-dir": { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
    return values;
  } catch (error) {
    throw new Failure(`${error.message}; try --help`, 2);
  }
}

function childEnv(extra = {}) {
  const env = {};
  for (const name of ENV_ALLOWLIST) if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, NO_COLOR: "1", ...extra };
}

/** Keeps the last `limit` bytes of a stream, for error reports. */
function tail(limit = TAIL_BYTES) {
  let text = "";
  return {
    push(chunk) {
      text += chunk.toString("utf8");
      if (text.length > limit) text = text.slice(-limit);
    },
    get text() {
      return text;
    },
  };
}

// Each child leads its own process group (detached) so one kill reaches whatever it spawned;
// that also means a terminal's Ctrl-C reaches only us, and we pass it on.
function signalGroup(child, signal) {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch (error) {
    if (error.code !== "ESRCH") throw error;
  }
}

function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => child.once("exit", () => done()));
}

/** SIGTERM to the group, SIGKILL if the leader outlives `graceMs`, then SIGKILL to stragglers. */
async function stopChild(child, graceMs) {
  if (child.exitCode === null && child.signalCode === null) signalGroup(child, "SIGTERM");
  const timer = setTimeout(() => signalGroup(child, "SIGKILL"), graceMs);
  await exited(child);
  clearTimeout(timer);
  // Anything the child left behind in its group goes too.
  signalGroup(child, "SIGKILL");
}

/** Runs one command to completion; collects its output; kills it on timeout or abort. */
async function run(argv, { timeoutMs, signal, verbose }) {
  const [command, ...args] = argv;
  const child = spawn(command, args, { cwd: ROOT, env: childEnv(), stdio: ["ignore", "pipe", "pipe"], detached: true });
  const out = tail(1 << 20);
  const err = tail();
  child.stdout.on("data", (chunk) => {
    out.push(chunk);
    if (verbose) process.stderr.write(chunk);
  });
  child.stderr.on("data", (chunk) => {
    err.push(chunk);
    if (verbose) process.stderr.write(chunk);
  });
  let spawnError;
  child.once("error", (error) => (spawnError = error));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void stopChild(child, 2_000);
  }, timeoutMs);
  const onAbort = () => void stopChild(child, 2_000);
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  const code = await new Promise((done) => {
    child.once("close", (exitCode, exitSignal) => done(exitCode ?? exitSignal));
    child.once("error", () => done(null));
  });
  clearTimeout(timer);
  signal.removeEventListener("abort", onAbort);
  return { code, timedOut, spawnError, stdout: out.text, stderr: err.text };
}

/** Starts `sandgate serve --port 0`; resolves with its base URL once it prints the listen line. */
function startServer(sandboxDir, { verbose }) {
  const child = spawn(process.execPath, [MAIN, "serve", "--port", "0"], {
    cwd: ROOT,
    env: childEnv({ SANDBOX_DIR: sandboxDir, SANDGATE_LOG_LEVEL: "warn" }),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const stderr = tail();
  child.stderr.on("data", (chunk) => {
    stderr.push(chunk);
    if (verbose) process.stderr.write(chunk);
  });
  const ready = new Promise((resolveUrl, reject) => {
    let buffered = "";
    let settled = false;
    const fail = (message) => {
      if (settled) return;
      settled = true;
      reject(new Failure(`${message}${stderr.text.trim() ? `\nserver stderr:\n${stderr.text.trimEnd()}` : ""}`, 1));
    };
    const timer = setTimeout(() => fail(`sandgate did not print its listen line within ${STARTUP_TIMEOUT_MS / 1000} s`), STARTUP_TIMEOUT_MS);
    timer.unref();
    child.stdout.on("data", (chunk) => {
      if (settled) return;
      buffered += chunk.toString("utf8");
      const newline = buffered.indexOf("\n");
      if (newline === -1) return;
      const first = buffered.slice(0, newline);
      const match = /listening on (http:\/\/\S+)/.exec(first);
      clearTimeout(timer);
      if (!match) return fail(`unexpected first line from sandgate serve: ${JSON.stringify(first)}`);
      settled = true;
      resolveUrl(match[1].replace(/\/+$/, ""));
    });
    child.once("error", (error) => fail(`could not start sandgate: ${error.message}`));
    // "close", not "exit": by then its stderr has been read, so the report includes it.
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      fail(`sandgate serve exited (${signal ?? `code ${code}`}) before listening`);
    });
  });
  return { child, stderr, ready };
}

async function listServerScenarios(signal) {
  const result = await run([SUITE, "list", "--server"], { timeoutMs: 30_000, signal, verbose: false });
  if (result.code !== 0) throw new Failure(`\`conformance list --server\` failed (${result.code}): ${result.stderr.trim()}`, 1);
  const names = [...result.stdout.matchAll(/^\s*-\s+(\S+)\s*$/gm)].map((m) => m[1]);
  if (names.length === 0) throw new Failure(`\`conformance list --server\` printed no scenarios:\n${result.stdout}`, 1);
  return names;
}

const subdirs = (dir) => (existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name) : []);

/** The checks.json the suite wrote under `dir` (in a timestamped subfolder not in `before`). */
function readChecks(dir, before) {
  for (const name of subdirs(dir).filter((n) => !before.includes(n))) {
    const file = join(dir, name, "checks.json");
    if (existsSync(file)) {
      const checks = JSON.parse(readFileSync(file, "utf8"));
      if (!Array.isArray(checks)) throw new Error(`${file} does not hold an array of checks`);
      return checks;
    }
  }
  return undefined;
}

const count = (checks, status) => checks.filter((c) => c.status === status).length;

/** One scenario's verdict: checks.json is the source of truth, the exit code a cross-check. */
async function runScenario(url, scenario, resultsDir, opts) {
  const dir = join(resultsDir, scenario);
  const before = subdirs(dir);
  const started = Date.now();
  const argv = [SUITE, "server", "--url", `${url}/mcp`, "--scenario", scenario, "-o", dir];
  const proc = await run(argv, { timeoutMs: SCENARIO_TIMEOUT_MS, signal: opts.signal, verbose: opts.verbose });
  const seconds = (Date.now() - started) / 1000;
  let checks;
  let note;
  try {
    checks = readChecks(dir, before);
  } catch (error) {
    note = `unreadable results: ${error.message}`;
  }
  const counts = checks
    ? { passed: count(checks, "SUCCESS"), failed: count(checks, "FAILURE"), warnings: count(checks, "WARNING") }
    : { passed: 0, failed: 0, warnings: 0 };
  let result;
  if (proc.spawnError) [result, note] = ["ERROR", `could not run the suite: ${proc.spawnError.message}`];
  else if (proc.timedOut) [result, note] = ["TIMEOUT", `no result within ${SCENARIO_TIMEOUT_MS / 1000} s`];
  else if (!checks) [result, note] = ["ERROR", note ?? `the suite exited (${proc.code}) without writing checks.json`];
  else if (checks.length === 0) [result, note] = ["FAIL", "the scenario ran no checks"];
  else if (counts.failed > 0) result = "FAIL";
  else if (proc.code !== 0) [result, note] = ["ERROR", `the suite exited ${proc.code} although no check failed`];
  else result = counts.warnings > 0 ? "WARN" : "PASS";
  return { scenario, result, ...counts, seconds, checks: checks ?? [], note, output: proc };
}

const passed = (r) => r.result === "PASS" || r.result === "WARN";

function table(results) {
  const width = Math.max(8, ...results.map((r) => r.scenario.length));
  const lines = [`${"scenario".padEnd(width)}  result   passed  failed  warnings`];
  for (const r of results) {
    lines.push(
      `${r.scenario.padEnd(width)}  ${r.result.padEnd(7)}  ${String(r.passed).padStart(6)}  ${String(r.failed).padStart(6)}  ${String(r.warnings).padStart(8)}`,
    );
  }
  return lines.join("\n");
}

const clip = (text, max) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Every failing or warning check of a required scenario, with what the server sent. */
function details(r) {
  const lines = [`${r.scenario}: ${r.result}${r.note ? ` (${r.note})` : ""}`];
  for (const c of r.checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING")) {
    lines.push(`  [${c.status}] ${c.id}: ${c.description ?? c.name ?? ""}`);
    if (c.errorMessage) lines.push(`    message: ${c.errorMessage}`);
    if (c.details !== undefined) lines.push(`    details: ${clip(JSON.stringify(c.details), 1500)}`);
  }
  if (r.result === "ERROR" || r.result === "TIMEOUT") {
    const out = `${r.output.stdout}${r.output.stderr}`.trim();
    if (out) lines.push(`  suite output (tail):\n${clip(out.slice(-3000), 3000).replace(/^/gm, "    ")}`);
  }
  return lines.join("\n");
}

/** One line per informational scenario that did not pass: its first complaint. */
function brief(r) {
  const first = r.checks.find((c) => c.status === "FAILURE") ?? r.checks.find((c) => c.status === "WARNING");
  const why = first ? `${first.id}: ${first.errorMessage ?? first.description ?? ""}` : (r.note ?? "");
  return `  ${r.scenario}: ${clip(why.replace(/\s+/g, " "), 200)}`;
}

function usage() {
  const text = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n");
  const end = text.findIndex((line) => !line.startsWith("//"));
  return text.slice(0, end).map((line) => line.replace(/^\/\/ ?/, "")).join("\n");
}

async function main() {
  const opts = options();
  if (opts.help) {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  if (!existsSync(MAIN)) throw new Failure(`${MAIN} not found: run \`npm run build\` first`, 2);
  if (!existsSync(SUITE)) throw new Failure(`${SUITE} not found: run \`npm install\` (devDependency @modelcontextprotocol/conformance)`, 2);

  const abort = new AbortController();
  let interrupted;
  const onSignal = (signal) => {
    if (interrupted) return;
    interrupted = signal;
    process.stderr.write(`\nconformance: ${signal}, stopping\n`);
    abort.abort();
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, onSignal);

  const sandboxDir = mkdtempSync(join(tmpdir(), "sandgate-conformance-"));
  const resultsDir = opts["output-dir"] ? resolve(opts["output-dir"]) : mkdtempSync(join(tmpdir(), "sandgate-conformance-results-"));
  let server;
  // Last resort if something throws past the finally: never leave the server or the dir behind.
  const lastResort = () => {
    if (server) signalGroup(server.child, "SIGKILL");
    rmSync(sandboxDir, { recursive: true, force: true });
    if (!opts["output-dir"]) rmSync(resultsDir, { recursive: true, force: true });
  };
  process.once("exit", lastResort);
  try {
    server = startServer(sandboxDir, opts);
    const url = await Promise.race([
      server.ready,
      new Promise((_, reject) => abort.signal.addEventListener("abort", () => reject(new Error("interrupted")), { once: true })),
    ]);
    process.stderr.write(`conformance: sandgate at ${url}/mcp (SANDBOX_DIR=${sandboxDir})\n`);

    let extra = [];
    if (opts.all) {
      const listed = await listServerScenarios(abort.signal);
      const missing = REQUIRED.filter((s) => !listed.includes(s));
      if (missing.length > 0) process.stderr.write(`conformance: warning: the suite no longer lists ${missing.join(", ")}\n`);
      extra = listed.filter((s) => !REQUIRED.includes(s));
    }

    let serverDied;
    server.child.once("exit", (code, signal) => (serverDied = `sandgate serve exited (${signal ?? `code ${code}`}) during the run`));
    const required = [];
    const informational = [];
    const plan = [...REQUIRED.map((s) => [s, required]), ...extra.map((s) => [s, informational])];
    for (const [i, [scenario, into]] of plan.entries()) {
      if (abort.signal.aborted || serverDied) break;
      const r = await runScenario(url, scenario, resultsDir, { signal: abort.signal, verbose: opts.verbose });
      if (abort.signal.aborted) break;
      into.push(r);
      process.stderr.write(`[${i + 1}/${plan.length}] ${scenario} ${r.result} (${r.seconds.toFixed(1)} s)\n`);
    }
    if (interrupted) {
      process.stdout.write(`conformance: interrupted (${interrupted}) after ${required.length + informational.length} of ${plan.length} scenarios\n`);
      return 130;
    }
    for (const scenario of REQUIRED.filter((s) => !required.some((r) => r.scenario === s))) {
      required.push({ scenario, result: "NOT RUN", passed: 0, failed: 0, warnings: 0, checks: [], note: "the server had stopped" });
    }

    const requiredPassed = required.filter(passed).length;
    process.stdout.write(`\n${table(required)}\n`);
    const failing = required.filter((r) => !passed(r));
    if (failing.length > 0) process.stdout.write(`\nFailures:\n${failing.map(details).join("\n")}\n`);
    if (opts.all) {
      process.stdout.write(`\nInformational (--all; does not affect the exit code):\n${table(informational)}\n`);
      const notPassing = informational.filter((r) => !passed(r));
      if (notPassing.length > 0) process.stdout.write(`\nWhy (first failing check of each):\n${notPassing.map(brief).join("\n")}\n`);
      process.stdout.write(`\ninformational: ${informational.filter(passed).length}/${informational.length} scenarios passed\n`);
    }
    if (serverDied) {
      process.stdout.write(`\n${serverDied}; server stderr (tail):\n${server.stderr.text.trimEnd()}\n`);
    } else if (failing.length > 0 && server.stderr.text.trim()) {
      process.stdout.write(`\nserver stderr (tail):\n${server.stderr.text.trimEnd()}\n`);
    }
    const ran = serverDied ? `${requiredPassed}/${REQUIRED.length} scenarios passed (server died)` : `${requiredPassed}/${REQUIRED.length} scenarios passed`;
    process.stdout.write(`conformance: ${ran}\n`);
    return requiredPassed === REQUIRED.length && !serverDied ? 0 : 1;
  } catch (error) {
    if (interrupted) return 130;
    throw error;
  } finally {
    if (server) await stopChild(server.child, STOP_GRACE_MS);
    rmSync(sandboxDir, { recursive: true, force: true });
    if (!opts["output-dir"]) rmSync(resultsDir, { recursive: true, force: true });
    process.off("exit", lastResort);
    for (const s of signals) process.off(s, onSignal);
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`conformance: ${error instanceof Failure ? error.message : (error.stack ?? error)}\n`);
    process.exitCode = error instanceof Failure ? error.exitCode : 1;
  },
);
