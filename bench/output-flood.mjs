// Issue 22's output floods, this tree against a reference tree, interleaved: what one call printing
// to the output cap costs the server's main thread, and what two flooding loops do to a benign client.
//
// node bench/output-flood.mjs --ref /path/to/reference/worktree [--pairs 3] [--floods 6] [--rounds 60]
// Both trees must be built (npm run build). Each tree's own bench/neighbour-server.mjs wraps its
// dist/ server (event-loop delay over IPC). Per tree and pair, a fresh server:
//   1. `floods` stateless calls, one at a time, each printing 64 KiB blocks until the 10 MB cap:
//      per call, the server loop's longest stall and the main thread's CPU time (/proc task schedstat);
//   2. `rounds` benign rounds (a session `1+1` and a stateless `1+1`, REST), alone;
//   3. the same rounds while a second client (127.0.0.2) floods in a session and statelessly, in loops.
// Printed: a markdown table per tree (medians over pairs) and the new/ref ratios pair by pair.

import { fork } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, chmodSync } from "node:fs";
import { request, Agent } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : fallback;
};
const HERE_TREE = resolve(new URL("..", import.meta.url).pathname);
const REF_TREE = option("ref");
if (!REF_TREE) throw new Error("--ref <reference worktree> is required");
const PAIRS = Number(option("pairs", "3"));
const FLOODS = Number(option("floods", "6"));
const ROUNDS = Number(option("rounds", "60"));
const FLOOD = `import os\nb = b"x" * 65536\nwhile True:\n    os.write(1, b)`;

const benignAgent = new Agent({ keepAlive: true, maxSockets: 4 });
const hostileAgent = new Agent({ keepAlive: false, localAddress: "127.0.0.2", maxSockets: 8 });

function post(url, path, body, agent) {
  return new Promise((done) => {
    const data = Buffer.from(JSON.stringify(body));
    const req = request(new URL(path, url), { method: "POST", agent, headers: { "content-type": "application/json", "content-length": data.length } });
    req.on("response", (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        try {
          done({ status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
        } catch {
          done({ status: res.statusCode, body: undefined });
        }
      });
    });
    req.on("error", (e) => done({ status: 0, body: e.message }));
    req.end(data);
  });
}

async function startServer(tree, root, n) {
  const dir = join(root, `server-${n}`);
  mkdirSync(dir);
  const child = fork(join(tree, "bench/neighbour-server.mjs"), ["--port", "0"], { env: { ...process.env, SANDBOX_DIR: dir, SANDGATE_LOG_LEVEL: "warn" }, silent: true });
  child.stderr.resume();
  const url = await new Promise((done, fail) => {
    let out = "";
    const timer = setTimeout(() => fail(new Error("the server did not listen within 60 s")), 60_000);
    child.stdout.on("data", (c) => {
      const m = /listening on (http:\/\/\S+)/.exec((out += c));
      if (m) {
        clearTimeout(timer);
        done(m[1]);
      }
    });
  });
  child.stdout.resume();
  return { child, url };
}

function ask(child, type) {
  return new Promise((done) => {
    const on = (msg) => {
      if (msg?.type === type) {
        child.off("message", on);
        done(msg);
      }
    };
    child.on("message", on);
    child.send({ type });
  });
}

/** CPU ms of the server's main thread (its first task) so far: schedstat's time on a CPU, in ns. */
function mainThreadCpuMs(pid) {
  return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const p99 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.99 * s.length) - 1)];
};

async function benignRounds(url, rounds) {
  const lat = { session: [], stateless: [] };
  let errors = 0;
  for (let i = 0; i < rounds; i++) {
    for (const kind of ["session", "stateless"]) {
      const t = performance.now();
      const r = await post(url, "/execute", { code: "1+1", language: "python", ...(kind === "session" ? { session_id: "benign" } : {}) }, benignAgent);
      if (r.status !== 200 || r.body?.status !== "ok") errors++;
      else lat[kind].push(performance.now() - t);
    }
  }
  return { lat, errors };
}

async function measure(tree, root, n) {
  const server = await startServer(tree, root, n);
  try {
    for (let i = 0; i < 5; i++) {
      await post(server.url, "/execute", { code: "1+1", language: "python", session_id: "benign" }, benignAgent);
      await post(server.url, "/execute", { code: "1+1", language: "python" }, benignAgent);
    }
    const stalls = [];
    const cpu = [];
    for (let i = 0; i < FLOODS; i++) {
      await ask(server.child, "reset");
      const cpu0 = mainThreadCpuMs(server.child.pid);
      const r = await post(server.url, "/execute", { code: FLOOD, language: "python", timeout: 20 }, hostileAgent);
      if (r.body?.status !== "output_limit") throw new Error(`a flood call ended ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      cpu.push(mainThreadCpuMs(server.child.pid) - cpu0);
      stalls.push((await ask(server.child, "stats")).eld.max);
    }
    const alone = await benignRounds(server.url, ROUNDS);
    let flooding = true;
    const loop = async (extra) => {
      while (flooding) await post(server.url, "/execute", { code: FLOOD, language: "python", timeout: 20, ...extra }, hostileAgent);
    };
    const loops = [loop({ session_id: "flood" }), loop({})];
    await new Promise((r) => setTimeout(r, 1000));
    await ask(server.child, "reset");
    const flooded = await benignRounds(server.url, ROUNDS);
    const loopStats = (await ask(server.child, "stats")).eld;
    flooding = false;
    await Promise.all(loops);
    return {
      stallMs: median(stalls),
      cpuMs: median(cpu),
      cpuMeanMs: cpu.reduce((a, b) => a + b, 0) / cpu.length,
      alone: { session: p99(alone.lat.session), stateless: p99(alone.lat.stateless) },
      flooded: { session: p99(flooded.lat.session), stateless: p99(flooded.lat.stateless) },
      loopP99: loopStats.p99,
      loopMax: loopStats.max,
      errors: alone.errors + flooded.errors,
    };
  } finally {
    server.child.kill("SIGTERM");
    await new Promise((r) => server.child.once("exit", r));
  }
}

const root = mkdtempSync(join(tmpdir(), "sandgate-bench-flood-"));
chmodSync(root, 0o711);
const runs = { new: [], ref: [] };
let n = 0;
try {
  for (let pair = 0; pair < PAIRS; pair++) {
    const order = pair % 2 === 0 ? ["ref", "new"] : ["new", "ref"];
    for (const which of order) {
      const result = await measure(which === "new" ? HERE_TREE : REF_TREE, root, ++n);
      runs[which].push(result);
      process.stderr.write(`pair ${pair + 1} ${which}: ${JSON.stringify(result)}\n`);
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : "-");
const ratio = (r) => `${f(r.flooded.session / r.alone.session)}x / ${f(r.flooded.stateless / r.alone.stateless)}x`;
const lines = [
  `| tree | flood: loop stall max ms (median of ${FLOODS}) | flood: main-thread CPU ms (median / mean) | benign p99 alone ms (session / stateless) | under two flood loops | p99 ratio flood/alone (session / stateless) | loop delay p99 / max ms under floods | errors |`,
  "|---|---|---|---|---|---|---|---|",
];
for (const which of ["ref", "new"]) {
  for (const [i, r] of runs[which].entries()) {
    lines.push(`| ${which} ${i + 1} | ${f(r.stallMs)} | ${f(r.cpuMs)} / ${f(r.cpuMeanMs)} | ${f(r.alone.session)} / ${f(r.alone.stateless)} | ${f(r.flooded.session)} / ${f(r.flooded.stateless)} | ${ratio(r)} | ${f(r.loopP99)} / ${f(r.loopMax)} | ${r.errors} |`);
  }
}
lines.push("", "new / ref, pair by pair (flood stall, flood main-thread CPU):");
for (let i = 0; i < PAIRS; i++) lines.push(`- pair ${i + 1}: ${f(runs.new[i].stallMs / runs.ref[i].stallMs)}x, ${f(runs.new[i].cpuMs / runs.ref[i].cpuMs)}x`);
process.stdout.write(`${lines.join("\n")}\n`);
benignAgent.destroy();
hostileAgent.destroy();
