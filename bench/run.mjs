// npm run bench: latency and throughput of the sandbox engine, with the seed systems' baseline
// (one `bwrap ... python3 -c` spawn per request) measured in the same run on the same host.
// Prints a Markdown report; figures go to BENCHMARKS.md by hand with the command that made them.
// `--only engine`, `--only server` (bench/server.mjs), `--only codemode` (bench/code-mode.mjs) or
// `--only neighbour` (bench/neighbour.mjs), `--only files` (bench/files.mjs), `--only images` (bench/images.mjs) or `--only packages`
// (bench/packages.mjs), `--only governance` (bench/governance.mjs), `--only audit` (bench/audit.mjs), `--only pii` (bench/pii.mjs: tokenizing cost per KB) or `--only tokens` (bench/workload/tokens.mjs:
// one job over nine real upstream servers, installed on first use) runs one part; all eleven run by default, in that order.

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../dist/config/index.js";
import { createApp } from "../dist/app/index.js";
import { silentLogger } from "../dist/util/logger.js";
import { buildSandboxArgv } from "../dist/sandbox/bwrap-args.js";
import { auditBench } from "./audit.mjs";
import { codeModeBench } from "./code-mode.mjs";
import { workloadBench } from "./workload/tokens.mjs";
import { filesBench } from "./files.mjs";
import { governanceBench } from "./governance.mjs";
import { imagesBench } from "./images.mjs";
import { packagesBench } from "./packages.mjs";
import { piiBench } from "./pii.mjs";
import { neighbourBench } from "./neighbour.mjs";
import { serverBench } from "./server.mjs";
import { descendants, rssKb } from "./proc.mjs";
import { fmt, pct, sleep } from "./stats.mjs";

const QUICK = process.argv.includes("--quick");
const ONLY = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
const PARTS = ["engine", "server", "codemode", "neighbour", "files", "images", "packages", "governance", "audit", "pii", "tokens"];
// `--only peers` (bench/peers: other sandboxes side by side, installed on demand; `--skip-install` if there) runs only when asked.
if (ONLY !== undefined && ![...PARTS, "peers"].includes(ONLY)) throw new Error(`--only takes ${[...PARTS, "peers"].join(", ")}, not ${ONLY}`);
const N_WARM = QUICK ? 20 : 60;
const N_SESSION = QUICK ? 300 : 2000;
const N_COLD = QUICK ? 10 : 30;
const THROUGHPUT_MS = QUICK ? 2000 : 5000;
const CALLERS = 2;

const TRIVIAL = {
  python: "1 + 1",
  javascript: "1 + 1",
  typescript: "const n: number = 1; n + 1",
  bash: "echo 2",
};
const BARE = {
  python: ["/usr/bin/python3", "-c", "print(1 + 1)"],
  javascript: ["/usr/bin/node", "-e", "console.log(1 + 1)"],
  bash: ["/usr/bin/bash", "-c", "echo 2"],
};


function check(result, language) {
  if (result.status !== "ok") throw new Error(`${language}: ${result.status} ${JSON.stringify(result.error)}`);
}

async function time(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

function bareArgv(runtime, command, workspaceDir) {
  const argv = buildSandboxArgv({
    bwrapPath: runtime.bwrapPath,
    mounts: { workspaceDir, workspaceBytes: 0, runnersDir: runtime.runnersDir, etcDir: runtime.etcDir, readOnlyPaths: runtime.readOnlyPaths, volumes: [] },
    env: { PATH: "/usr/bin:/bin", HOME: "/workspace", LANG: "C.UTF-8" },
    command,
    rlimits: { fileSizeBytes: 64 << 20, openFiles: 1024 },
  });
  return argv.slice(argv.indexOf(runtime.bwrapPath)); // no launcher, no cgroup, no seccomp: bwrap directly
}

function spawnBare(argv) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (c) => (out += c));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 && out.trim() === "2" ? resolve() : reject(new Error(`bare spawn failed: ${code} ${out}`))));
  });
}

async function throughput(fn) {
  const end = performance.now() + THROUGHPUT_MS;
  let count = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (performance.now() < end) {
        await fn();
        count++;
      }
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

/** Until every pool is full: a pool still starting sandboxes would compete for the CPU with the call measured. */
async function waitPoolReady(engine) {
  for (;;) {
    const state = Object.values(engine.poolState());
    if (state.every((s) => s.ready >= s.target && s.starting === 0)) return;
    await sleep(2);
  }
}

function comm(pid) {
  return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
}

async function engineBench() {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-"));
  const config = loadConfig({ ...process.env, SANDBOX_DIR: dir });
  // Bare engines, as the library's own callers make them: ungoverned, no upstream servers, no audit, no observers.
  const bare = { log: silentLogger, version: "bench", governed: false, upstream: false, audit: false, observe: false };
  const pooledApp = createApp(config, bare); // the default pool sizes (SANDGATE_POOL)
  const coldApp = createApp(config, { ...bare, pool: { python: 0, javascript: 0, bash: 0 } });
  const pooled = pooledApp.engine;
  const cold = coldApp.engine;
  const rows = [];
  const bareWs = join(dir, "bare-ws");
  (await import("node:fs")).mkdirSync(bareWs);
  try {
    for (const language of ["python", "javascript", "typescript", "bash"]) {
      const kind = language === "typescript" ? "javascript" : language;
      const code = TRIVIAL[language];
      // warm pool: one call per ready sandbox
      const warm = [];
      for (let i = 0; i < N_WARM; i++) {
        await waitPoolReady(pooled);
        warm.push(await time(async () => check(await pooled.execute({ language, code }), language)));
      }
      // session reuse
      const s = pooled.sessions.create();
      for (let i = 0; i < 20; i++) await pooled.execute({ language, code, sessionId: s.id });
      const sess = [];
      for (let i = 0; i < N_SESSION; i++) sess.push(await time(async () => check(await pooled.execute({ language, code, sessionId: s.id }), language)));
      await pooled.sessions.stop(s.id);
      // cold sandbox per call
      const coldT = [];
      for (let i = 0; i < N_COLD; i++) coldT.push(await time(async () => check(await cold.execute({ language, code }), language)));
      // bare bwrap + interpreter per request (baseline)
      const bareArgs = bareArgv(pooled.runtime, BARE[kind], bareWs);
      const bare = [];
      for (let i = 0; i < N_COLD; i++) bare.push(await time(() => spawnBare(bareArgs)));
      // throughput with 2 callers
      await waitPoolReady(pooled);
      const statelessTput = await throughput(async () => check(await pooled.execute({ language, code }), language));
      const bareTput = await throughput(() => spawnBare(bareArgs));
      rows.push({ language, warm, sess, coldT, bare, statelessTput, bareTput });
      process.stderr.write(`bench: ${language} done\n`);
    }

    // session-reuse throughput (Python): one session, and two sessions with 2 callers
    const s1 = pooled.sessions.create();
    const s2 = pooled.sessions.create();
    await pooled.execute({ language: "python", code: "0", sessionId: s1.id });
    await pooled.execute({ language: "python", code: "0", sessionId: s2.id });
    let n = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < THROUGHPUT_MS / 2) {
      await pooled.execute({ language: "python", code: "1 + 1", sessionId: s1.id });
      n++;
    }
    const oneSession = n / ((performance.now() - t0) / 1000);
    const ids = [s1.id, s2.id];
    let k = 0;
    const twoSessions = await throughput(async () => {
      const id = ids[k++ % 2];
      await pooled.execute({ language: "python", code: "1 + 1", sessionId: id });
    });

    // idle Python session memory: the session's runner and the two bwrap processes above it
    await pooled.sessions.stop(s1.id);
    await pooled.sessions.stop(s2.id);
    const idle = pooled.sessions.create();
    await pooled.execute({ language: "python", code: "x = 1", sessionId: idle.id });
    await sleep(300);
    const parentOf = (pid) => {
      const st = readFileSync(`/proc/${pid}/stat`, "utf8");
      return Number(st.slice(st.lastIndexOf(")") + 2).split(" ")[1]);
    };
    const runners = descendants(process.pid).filter((p) => readFileSync(`/proc/${p}/cmdline`, "utf8").includes("python_runner.py"));
    const runnerPid = runners.sort((a, b) => rssKb(b) - rssKb(a))[0];
    const runnerRss = runnerPid ? rssKb(runnerPid) : 0;
    const sandboxProcs = runnerPid ? [runnerPid, parentOf(runnerPid), parentOf(parentOf(runnerPid))].filter((p) => comm(p) === "bwrap" || p === runnerPid) : [];

    const lines = [];
    lines.push(`## Engine (${new Date().toISOString().slice(0, 10)}, ${QUICK ? "quick" : "full"} run)`);
    lines.push("");
    lines.push("Latency of a trivial snippet, ms (p50 / p95):");
    lines.push("");
    lines.push("| language | warm pool (call from idle) | session reuse | cold sandbox | bare `bwrap` + interpreter | cold / bare (p50) |");
    lines.push("|---|---|---|---|---|---|");
    for (const r of rows) {
      lines.push(`| ${r.language} | ${fmt(pct(r.warm, 50))} / ${fmt(pct(r.warm, 95))} | ${fmt(pct(r.sess, 50))} / ${fmt(pct(r.sess, 95))} | ${fmt(pct(r.coldT, 50))} / ${fmt(pct(r.coldT, 95))} | ${fmt(pct(r.bare, 50))} / ${fmt(pct(r.bare, 95))} | ${(pct(r.coldT, 50) / pct(r.bare, 50)).toFixed(2)}x |`);
    }
    lines.push("");
    lines.push(`Stateless throughput with ${CALLERS} concurrent callers, executions/s (each call gets a fresh sandbox):`);
    lines.push("");
    const barePython = rows.find((r) => r.language === "python").bareTput;
    lines.push("| language | sandgate (warm pool) | bare `bwrap` + same interpreter, spawn per request | ratio | ratio to bare `bwrap python3 -c` |");
    lines.push("|---|---|---|---|---|");
    for (const r of rows) {
      lines.push(`| ${r.language} | ${r.statelessTput.toFixed(1)} | ${r.bareTput.toFixed(1)} | ${(r.statelessTput / r.bareTput).toFixed(2)}x | ${(r.statelessTput / barePython).toFixed(2)}x |`);
    }
    lines.push("");
    lines.push(`Session reuse, trivial Python: ${oneSession.toFixed(0)} executions/s in one session (sequential); ${twoSessions.toFixed(0)} executions/s over two sessions with ${CALLERS} callers.`);
    lines.push("");
    lines.push(`Idle Python session: runner ${(runnerRss / 1024).toFixed(1)} MB resident; with its two bwrap processes ${(sandboxProcs.reduce((a, p) => a + rssKb(p), 0) / 1024).toFixed(1)} MB.`);
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    await pooledApp.close();
    await coldApp.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  if (ONLY === undefined || ONLY === "engine") await engineBench();
  if (ONLY === undefined || ONLY === "server") process.stdout.write(`\n${await serverBench({ quick: QUICK })}\n`);
  if (ONLY === undefined || ONLY === "codemode") process.stdout.write(`\n${await codeModeBench({ quick: QUICK })}\n`);
  if (ONLY === undefined || ONLY === "neighbour") process.stdout.write(`\n${await neighbourBench({ quick: QUICK })}\n`);
  if (ONLY === undefined || ONLY === "files") process.stdout.write(`\n${await filesBench({ quick: QUICK })}\n`);
  if (ONLY === undefined || ONLY === "images") process.stdout.write(`\n${await imagesBench({ quick: QUICK })}\n`);
  if (ONLY === undefined || ONLY === "packages") process.stdout.write(`\n${await packagesBench({ quick: QUICK })}\n`);
  if (ONLY === undefined || ONLY === "governance") process.stdout.write(`\n${await governanceBench({ quick: QUICK })}\n`);
  if (ONLY === undefined || ONLY === "audit") process.stdout.write(`\n${await auditBench({ quick: QUICK })}\n`);
  if (ONLY === undefined || ONLY === "pii") process.stdout.write(`\n${await piiBench({ quick: QUICK })}\n`);
  if (ONLY === undefined || ONLY === "tokens") process.stdout.write(`\n${await workloadBench()}\n`);
  if (ONLY === "peers") process.stdout.write(`\n${await (await import("./peers/index.mjs")).peersReport({ quick: QUICK, skipInstall: process.argv.includes("--skip-install") })}\n`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
