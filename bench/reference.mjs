// npm run bench:reference [-- --pairs N] [--ref <commit>]: the engine bench of this checkout against a
// pinned reference commit, run in turn in the same session (ref, this, ref, this, ...), each run
// against its own bare `bwrap` baseline. Small steps that each look like noise add up; only a
// comparison with a fixed point, interleaved on the same machine, shows the drift. Prints a Markdown
// table for BENCHMARKS.md ("Drift against the pinned reference").

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The state of 2026-11-22, before the engine lost its throughput in small steps (issue 22). */
export const PINNED_REFERENCE = "81fb7ed";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const ref = option("--ref", PINNED_REFERENCE);
const pairs = Number(option("--pairs", "3"));
if (!/^[0-9a-f]{7,40}$/.test(ref)) throw new Error(`--ref takes a commit id, not ${ref}`);
if (!Number.isInteger(pairs) || pairs < 1 || pairs > 20) throw new Error("--pairs takes a whole number from 1 to 20");

function run(argv, cwd) {
  const out = spawnSync(argv[0], argv.slice(1), { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 << 20 });
  if (out.status !== 0) throw new Error(`${argv.join(" ")} in ${cwd} exited with ${out.status}`);
  return out.stdout;
}

/**
 * A worktree of the reference outside the checkout (its tests must not join this one's), built once;
 * it borrows this checkout's node_modules.
 */
function referenceTree() {
  const dir = join(tmpdir(), "sandgate-bench-ref", ref);
  if (!existsSync(join(dir, "package.json"))) {
    mkdirSync(dirname(dir), { recursive: true });
    run(["git", "worktree", "prune"], root);
    run(["git", "worktree", "add", "--detach", dir, ref], root);
  }
  if (!existsSync(join(dir, "node_modules"))) symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  if (!existsSync(join(dir, "dist", "execution", "index.js"))) {
    process.stderr.write(`reference: building ${ref} in ${dir}\n`);
    run(["npx", "tsc", "-p", "tsconfig.build.json"], dir);
  }
  return dir;
}

/** The figures one engine run prints, by language. */
function parse(report) {
  const figures = {};
  for (const line of report.split("\n")) {
    const cells = line.split("|").map((c) => c.trim()).filter((c, i, all) => i > 0 && i < all.length - 1);
    const language = cells[0];
    if (!["python", "javascript", "typescript", "bash"].includes(language)) continue;
    figures[language] ??= {};
    if (cells.length === 6) {
      figures[language].warmP50 = Number(cells[1].split("/")[0]);
      figures[language].sessionP50 = Number(cells[2].split("/")[0]);
      figures[language].coldOverBare = Number(cells[5].replace("x", ""));
    } else if (cells.length === 5) {
      figures[language].statelessOverBare = Number(cells[3].replace("x", ""));
    }
  }
  const reuse = /Session reuse, trivial Python: (\d+) executions\/s in one session/.exec(report);
  return { languages: figures, oneSession: reuse ? Number(reuse[1]) : NaN };
}

const median = (values) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : Number(((sorted[middle - 1] + sorted[middle]) / 2).toFixed(2));
};

const refDir = referenceTree();
run(["npm", "run", "build", "--silent"], root);
const head = run(["git", "rev-parse", "--short", "HEAD"], root).trim();
const results = { ref: [], head: [] };
for (let i = 0; i < pairs; i++) {
  for (const [side, cwd] of [["ref", refDir], ["head", root]]) {
    process.stderr.write(`reference: pair ${i + 1}/${pairs}, ${side === "ref" ? ref : head}\n`);
    results[side].push(parse(run(["node", "bench/run.mjs", "--quick", "--only", "engine"], cwd)));
  }
}

const rows = [];
const row = (label, pick, unit = "") => {
  const a = results.ref.map(pick);
  const b = results.head.map(pick);
  const show = (values) => `${values.map((v) => (Number.isFinite(v) ? `${v}${unit}` : "-")).join(", ")} (median ${median(values)}${unit})`;
  rows.push(`| ${label} | ${show(a)} | ${show(b)} | ${(median(b) / median(a)).toFixed(2)} |`);
};
for (const language of ["python", "javascript", "typescript", "bash"]) {
  row(`stateless throughput / bare, ${language}`, (r) => r.languages[language]?.statelessOverBare, "x");
}
for (const language of ["python", "javascript", "typescript", "bash"]) row(`cold / bare p50, ${language}`, (r) => r.languages[language]?.coldOverBare, "x");
for (const language of ["python", "javascript", "typescript", "bash"]) row(`warm pool p50 ms, ${language}`, (r) => r.languages[language]?.warmP50);
row("session reuse, one session, calls/s", (r) => r.oneSession);

process.stdout.write(
  [
    `Engine against the pinned reference ${ref}, ${pairs} interleaved pairs (\`npm run bench:reference -- --pairs ${pairs}\`), ${new Date().toISOString().slice(0, 16)} UTC, this checkout at ${head}:`,
    "",
    `| figure | ${ref} (runs, median) | ${head} (runs, median) | ${head} / ${ref} |`,
    "|---|---|---|---|",
    ...rows,
    "",
  ].join("\n"),
);
