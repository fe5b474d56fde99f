// The packages part of `npm run bench`: what `import numpy, pandas` costs in a warm session, with
// the admin's set synced (numpy and pandas from the system). The first import in a session pays
// for loading them; the goal is that every later one costs nothing beyond a trivial call.

import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { syncPackages } from "../dist/cli/package-sync.js";
import { loadConfig } from "../dist/config/index.js";
import { createApp } from "../dist/app/index.js";
import { silentLogger } from "../dist/util/logger.js";
import { fmt, pct } from "./stats.mjs";

const IMPORT = "import numpy, pandas\nlen(pandas.DataFrame({'a': numpy.arange(3)}))";

async function timed(engine, sessionId, code) {
  const t0 = performance.now();
  const result = await engine.execute({ code, language: "python", sessionId, timeoutS: 60 });
  const ms = performance.now() - t0;
  if (result.status !== "ok") throw new Error(`packages bench: ${result.status} ${JSON.stringify(result.error)}`);
  return ms;
}

export async function packagesBench({ quick = false } = {}) {
  const sessions = quick ? 5 : 15;
  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-packages-"));
  chmodSync(dir, 0o755);
  const config = loadConfig({ SANDBOX_DIR: dir, SANDGATE_PYTHON_PACKAGES: "numpy,pandas" });
  const synced = await syncPackages(config, { progress: () => {} });
  if (synced.some((o) => o.status === "failed")) throw new Error(`packages bench: sync failed: ${JSON.stringify(synced)}`);
  const app = createApp(config, { log: silentLogger, version: "bench", pool: { python: 0, javascript: 0, bash: 0 }, governed: false, upstream: false, audit: false, observe: false });
  const engine = app.engine;
  const first = [];
  const second = [];
  const trivial = [];
  try {
    for (let i = 0; i < sessions; i++) {
      const session = engine.sessions.create();
      await timed(engine, session.id, "1 + 1"); // warm: the runner is up and has run a call
      for (let k = 0; k < 3; k++) trivial.push(await timed(engine, session.id, "1 + 1"));
      first.push(await timed(engine, session.id, IMPORT));
      for (let k = 0; k < 3; k++) second.push(await timed(engine, session.id, IMPORT));
      await engine.sessions.stop(session.id);
    }
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const p50 = (xs) => pct(xs, 50);
  return [
    `### Packages: import numpy, pandas in a warm Python session (${sessions} sessions, set synced)`,
    "",
    "| call | p50 ms | p90 ms |",
    "|---|---|---|",
    `| trivial call (1 + 1) | ${fmt(p50(trivial))} | ${fmt(pct(trivial, 90))} |`,
    `| first import in the session | ${fmt(p50(first))} | ${fmt(pct(first, 90))} |`,
    `| later imports in the session | ${fmt(p50(second))} | ${fmt(pct(second, 90))} |`,
    "",
    `Later import over a trivial call: ${fmt(p50(second) - p50(trivial))} ms at p50; first import / later import: ${(p50(first) / p50(second)).toFixed(0)}x.`,
  ].join("\n");
}
