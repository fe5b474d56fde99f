// The files part of `npm run bench`: a 50 MB raw upload and its streamed download through the real
// server (REST, port 0), in MB/s, and the memory held while they run. The client streams from a
// file on disk and hashes the download as it comes, so what is held is the server's: a buffering
// server would hold about the file's size. Memory is measured in a separate round that collects
// garbage every 20 ms (peak RSS otherwise mostly shows how late V8 collects).

import { createHash, randomBytes } from "node:crypto";
import { chmodSync, createReadStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { loadConfig } from "../dist/config/index.js";
import { createApp } from "../dist/app/index.js";
import { startHttpServer } from "../dist/server/index.js";
import { silentLogger } from "../dist/util/logger.js";
import { fmt } from "./stats.mjs";

const MB = 1024 * 1024;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");

/** Peak growth of live buffer memory (and of RSS) while `fn` runs, garbage collected every 20 ms. */
async function held(fn) {
  gc();
  const before = process.memoryUsage();
  let buffers = before.arrayBuffers;
  let rss = before.rss;
  const timer = setInterval(() => {
    gc();
    const now = process.memoryUsage();
    buffers = Math.max(buffers, now.arrayBuffers);
    rss = Math.max(rss, now.rss);
  }, 20);
  try {
    await fn();
    return { buffersMb: (buffers - before.arrayBuffers) / MB, rssMb: (rss - before.rss) / MB };
  } finally {
    clearInterval(timer);
  }
}

async function timed(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

function upload(url, file, size) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "PUT", headers: { "content-type": "application/octet-stream", "content-length": String(size) } }, (res) => {
      let text = "";
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`upload: ${res.statusCode} ${text}`))));
    });
    req.on("error", reject);
    createReadStream(file, { highWaterMark: MB }).pipe(req);
  });
}

function download(url) {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`download: ${res.statusCode}`));
      const hash = createHash("sha256");
      let size = 0;
      res.on("data", (chunk) => {
        size += chunk.length;
        hash.update(chunk);
      });
      res.on("end", () => resolve({ size, sha: hash.digest("hex") }));
      res.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

export async function filesBench({ quick = false } = {}) {
  const sizeMb = 50;
  const rounds = quick ? 2 : 5;
  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-files-"));
  // The sandbox user must reach the workspaces below it (mkdtemp makes it 0700).
  chmodSync(dir, 0o755);
  const file = join(dir, "payload.bin");
  const payload = randomBytes(sizeMb * MB);
  const sha = createHash("sha256").update(payload).digest("hex");
  writeFileSync(file, payload);
  const config = loadConfig({ SANDBOX_DIR: join(dir, "sandbox") });
  const app = createApp(config, { log: silentLogger, version: "bench", pool: { python: 0, javascript: 0, bash: 0 }, governed: false, upstream: false, audit: false, observe: false });
  const server = await startHttpServer({
    engine: app.engine,
    codeMode: app.codeMode,
    governance: app.governance,
    config: { ...config, server: { ...config.server, port: 0 } },
    log: silentLogger,
    version: "bench",
    startedAt: Date.now(),
  });
  const rows = [];
  try {
    const base = `${server.url}/sessions/bench-files/files/content?path=payload.bin`;
    // One round first: the session, its workspace and the helper's code warm up.
    await upload(base, file, payload.length);
    await download(base);
    const doUpload = async () => {
      const reply = await upload(base, file, payload.length);
      if (reply.size !== payload.length) throw new Error(`upload wrote ${reply.size} bytes`);
    };
    const doDownload = async () => {
      const got = await download(base);
      if (got.sha !== sha) throw new Error("the download differs from the upload");
    };
    const up = [];
    const down = [];
    for (let i = 0; i < rounds; i++) {
      up.push(sizeMb / ((await timed(doUpload)) / 1000));
      down.push(sizeMb / ((await timed(doDownload)) / 1000));
    }
    const upHeld = await held(doUpload);
    const downHeld = await held(doDownload);
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    rows.push(`| upload (PUT raw body) | ${fmt(median(up))} | ${fmt(Math.min(...up))} | ${fmt(upHeld.buffersMb)} | ${fmt(upHeld.rssMb)} |`);
    rows.push(`| download (GET, streamed) | ${fmt(median(down))} | ${fmt(Math.min(...down))} | ${fmt(downHeld.buffersMb)} | ${fmt(downHeld.rssMb)} |`);
  } finally {
    await server.close();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    `### Files: ${sizeMb} MB through the REST server (${rounds} rounds, byte-exact by sha256)`,
    "",
    "| transfer | median MB/s | slowest MB/s | buffers held, peak MB | RSS growth, peak MB |",
    "|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${await filesBench({ quick: process.argv.includes("--quick") })}\n`);
}
