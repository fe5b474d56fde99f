// node bench/bash-per-kb.mjs [--ref <dist dir>] [--rounds N] [--dir <scripts>] [--emit KB]: CPU ms per KB of the Bash
// analysis on 10, 30 and 50 KB programs (issue 22), optionally against another build's dist/ in the same process.
//
// Each round analyses every program a few times with this build and with the reference, alternately, and
// takes process.cpuUsage() around each batch: CPU time, unlike wall time, is not inflated by other load on a
// busy machine. The table gives the median over rounds. Programs: agent-like code with functions, loops,
// pipelines, here-documents and downloads (below), and with --dir the shell scripts of a folder, concatenated.

import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const ROUNDS = Number(option("--rounds", "7"));
const REF = option("--ref", undefined);
const DIR = option("--dir", undefined);
const SIZES = [10, 30, 50];

/** Units of varied, benign agent-like bash; copies with renamed identifiers make programs of any size. */
const UNITS = [
  (i) => `
# Summarise the CSV files under a folder.
count_${i}() {
  local dir="$1"
  find "$dir" -type f -name '*.csv' | while read -r file; do
    lines=$(wc -l < "$file")
    echo "$file $lines"
  done | sort -k2 -n | tail -5
}
count_${i} /workspace > /workspace/report_${i}.txt
grep -c error /workspace/log_${i}.txt || true
`,
  (i) => `
OUT_${i}="\${OUT_DIR:-/workspace/out}/run_${i}"
mkdir -p "$OUT_${i}"
for name in alpha beta gamma; do
  if [[ -f "/workspace/$name.json" ]]; then
    jq -r '.items[] | select(.size > ${i}) | .name' "/workspace/$name.json" >> "$OUT_${i}/names.txt"
  elif [ -d "/workspace/$name" ]; then
    tar -czf "$OUT_${i}/$name.tgz" -C /workspace "$name"
  else
    printf 'missing %s\\n' "$name" >&2
  fi
done
`,
  (i) => `
case "\${MODE_${i}:-fast}" in
  fast) flags_${i}=(-j 2 --quiet) ;;
  slow|debug) flags_${i}=(-j 1 --verbose) ;;
  *) echo "unknown mode" >&2; exit 2 ;;
esac
curl -fsSL "https://api.example.com/v1/items?page=${i}" -o "/tmp/items_${i}.json"
python3 - "/tmp/items_${i}.json" <<'PY'
import json, sys
print(len(json.load(open(sys.argv[1]))))
PY
cat > "/workspace/config_${i}.ini" <<EOF
[main]
id = ${i}
mode = \${MODE_${i}:-fast}
EOF
`,
  (i) => `
retry_${i}() {
  local n=0
  until "$@"; do
    n=$((n + 1))
    (( n >= 3 )) && return 1
    sleep $((n * 2))
  done
}
retry_${i} git -C "/workspace/repo_${i}" pull --ff-only
total_${i}=0
while IFS=, read -r key value; do
  total_${i}=$((total_${i} + value))
done < <(cut -d, -f1,3 "/workspace/table_${i}.csv")
echo "total: $total_${i}" | tee -a /workspace/summary.log
`,
];

function agentProgram(bytes) {
  let code = "#!/usr/bin/env bash\nset -euo pipefail\n";
  for (let i = 0; Buffer.byteLength(code) < bytes; i++) code += (UNITS[i % UNITS.length])(i);
  return code;
}

function firstLine(path) {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(64);
    return buffer.toString("latin1", 0, readSync(fd, buffer, 0, 64, 0)).split("\n")[0];
  } finally {
    closeSync(fd);
  }
}

/** The folder's shell scripts (first line #!.../sh or bash), concatenated in name order until `bytes`. */
function dirProgram(dir, bytes) {
  let code = "";
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (!statSync(path).isFile() || !/^#!.*\b(ba)?sh\b/.test(firstLine(path))) continue;
    const text = readFileSync(path, "utf8");
    code += text + "\n";
    if (Buffer.byteLength(code) >= bytes) return code;
  }
  return code;
}

// --emit KB: print the agent-like program of that size (to profile it with node --cpu-prof) and stop.
if (option("--emit", undefined)) {
  process.stdout.write(agentProgram(Number(option("--emit", "0")) * 1024));
  process.exit(0);
}

async function loadAnalyzer(dist) {
  const { Analyzer } = await import(pathToFileURL(join(resolve(dist), "index.js")).href);
  const analyzer = new Analyzer({ cacheEntries: 0 });
  await analyzer.ready();
  return analyzer;
}

/** tree-sitter's parse alone (no walk, no rules): the floor under any change to the rules' side. */
async function loadParser() {
  const require = createRequire(import.meta.url);
  const { Parser, Language } = await import("web-tree-sitter");
  await Parser.init();
  const parser = new Parser();
  parser.setLanguage(await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm")));
  return { analyzeLoaded: (_language, code) => parser.parse(code)?.delete() };
}

const builds = [["this", await loadAnalyzer(new URL("../dist", import.meta.url).pathname)]];
if (REF) builds.push(["ref", await loadAnalyzer(REF)]);
builds.push(["parse", await loadParser()]);

const programs = [];
for (const kb of SIZES) programs.push({ kind: "agent-like", code: agentProgram(kb * 1024) });
if (DIR) for (const kb of SIZES) programs.push({ kind: `scripts of ${DIR}`, code: dirProgram(DIR, kb * 1024) });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = [];
for (const { kind, code } of programs) {
  const kb = Buffer.byteLength(code) / 1024;
  const runs = Math.max(3, Math.round(300 / kb));
  const perKb = Object.fromEntries(builds.map(([name]) => [name, []]));
  for (const [, analyzer] of builds) for (let i = 0; i < 5; i++) analyzer.analyzeLoaded("bash", code);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, analyzer] of round % 2 === 0 ? builds : [...builds].reverse()) {
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < runs; i++) analyzer.analyzeLoaded("bash", code);
      const cpu = process.cpuUsage(cpu0);
      perKb[name].push((cpu.user + cpu.system) / 1000 / runs / kb);
    }
  }
  const row = [kind, kb.toFixed(1), median(perKb.this).toFixed(3)];
  if (REF) row.push(median(perKb.ref).toFixed(3), (median(perKb.this) / median(perKb.ref)).toFixed(2));
  row.push(median(perKb.parse).toFixed(3));
  rows.push(`| ${row.join(" | ")} |`);
}
const head = [...(REF ? ["program", "KB", "CPU ms/KB (this)", "CPU ms/KB (ref)", "this/ref"] : ["program", "KB", "CPU ms/KB"]), "parse alone, CPU ms/KB"];
console.log([`Bash analysis CPU per KB, median of ${ROUNDS} rounds${REF ? `, interleaved with ${REF}` : ""}:`, "", `| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...rows].join("\n"));
