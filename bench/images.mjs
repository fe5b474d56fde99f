// The images part of `npm run bench`: what an image result costs. A warm Python and JavaScript
// session runs the same call with and without returning a small PNG (sandgate.show), interleaved,
// and the report gives the median and p90 of each and their difference (goal: <= 5 ms extra).

import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../dist/config/index.js";
import { createApp } from "../dist/app/index.js";
import { silentLogger } from "../dist/util/logger.js";
import { fmt, pct } from "./stats.mjs";

/** A 3 x 2 red PNG (79 bytes). */
const TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGP8zwAFTDAGAwATKQED8NgHhAAAAABJRU5ErkJggg==";

const CASES = {
  python: {
    setup: `import base64, sandgate\nimage = base64.b64decode("${TINY_PNG}")\nsandgate.show(image)`,
    plain: "n = 1\nn",
    image: "n = 1\nsandgate.show(image)\nn",
  },
  javascript: {
    setup: `globalThis.image = Buffer.from("${TINY_PNG}", "base64");\nsandgate.show(image);`,
    plain: "const n = 1;\nn",
    image: "const n = 1;\nsandgate.show(image);\nn",
  },
};

async function timed(engine, sessionId, language, code, images) {
  const t0 = performance.now();
  const result = await engine.execute({ code, language, sessionId });
  const ms = performance.now() - t0;
  if (result.status !== "ok" || (result.images?.length ?? 0) !== images) throw new Error(`${language}: ${result.status} ${JSON.stringify(result.error ?? result.imagesNote)}`);
  return ms;
}

export async function imagesBench({ quick = false } = {}) {
  const n = quick ? 60 : 300;
  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-images-"));
  chmodSync(dir, 0o755);
  const app = createApp(loadConfig({ SANDBOX_DIR: dir }), { log: silentLogger, version: "bench", pool: { python: 0, javascript: 0, bash: 0 }, governed: false, upstream: false, audit: false, observe: false });
  const engine = app.engine;
  const rows = [];
  try {
    for (const [language, c] of Object.entries(CASES)) {
      const session = engine.sessions.create();
      await timed(engine, session.id, language, c.setup, 1);
      for (let i = 0; i < 10; i++) {
        await timed(engine, session.id, language, c.plain, 0);
        await timed(engine, session.id, language, c.image, 1);
      }
      const plain = [];
      const image = [];
      for (let i = 0; i < n; i++) {
        plain.push(await timed(engine, session.id, language, c.plain, 0));
        image.push(await timed(engine, session.id, language, c.image, 1));
      }
      await engine.sessions.stop(session.id);
      const p50 = [pct(plain, 50), pct(image, 50)];
      const p90 = [pct(plain, 90), pct(image, 90)];
      rows.push(`| ${language} | ${fmt(p50[0])} / ${fmt(p90[0])} | ${fmt(p50[1])} / ${fmt(p90[1])} | ${fmt(p50[1] - p50[0])} / ${fmt(p90[1] - p90[0])} |`);
    }
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    `## Images (warm session, ${n} calls each, interleaved)`,
    "",
    "| language | without image, ms (p50 / p90) | with a small PNG via sandgate.show, ms | extra, ms (goal <= 5) |",
    "|---|---|---|---|",
    ...rows,
  ].join("\n");
}
