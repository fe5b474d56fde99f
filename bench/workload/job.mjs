// The token workload's job: a day of seeded logs and the service owners, the answer computed from the
// files, the report both agents write, the code-mode agent's program and searches, and the outcome check.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// ---------------------------------------------------------------------------------------------
// The job's data: a day of logs from 40 hosts and the service owners, seeded.

const SERVICES = ["payments", "auth", "search", "checkout", "inventory", "shipping", "notifications", "billing"];
const TEAMS = { payments: "team-money", auth: "team-identity", search: "team-discovery", checkout: "team-money", inventory: "team-supply", shipping: "team-supply", notifications: "team-platform", billing: "team-money" };
/** Chance that a line of each service is an ERROR; distinct enough that the top 3 never tie. */
const ERROR_RATE = [0.22, 0.08, 0.05, 0.17, 0.11, 0.03, 0.06, 0.13];
const MESSAGES = {
  ERROR: ["timeout after 30s", "upstream returned 503", "connection reset by peer", "deadlock detected, retrying", "invalid response from gateway"],
  WARN: ["slow query 1200ms", "retrying request", "cache miss ratio above 0.4", "queue depth 512"],
  INFO: ["request completed 200", "health check ok", "cache refreshed", "user session started", "job scheduled"],
  DEBUG: ["payload size 2048", "span exported", "feature flag evaluated"],
};
export const LOG_FILES = 40;
const LOG_BYTES = 5000;
export const DAY = "2026-11-20";

/** mulberry32: the same data on every run. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 40 host logs of ~5 KB (timestamp, level, service, request id, message) and owners.csv. */
export function writeData(dataDir) {
  const rand = prng(20261123);
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  let bytes = 0;
  for (let f = 0; f < LOG_FILES; f++) {
    const lines = [];
    let size = 0;
    let t = Date.parse(`${DAY}T00:00:00Z`) + f * 1_800_000;
    while (size < LOG_BYTES) {
      const s = Math.floor(rand() * SERVICES.length);
      const r = rand();
      const level = r < ERROR_RATE[s] ? "ERROR" : r < ERROR_RATE[s] + 0.1 ? "WARN" : r < 0.85 ? "INFO" : "DEBUG";
      t += Math.floor(rand() * 20_000);
      const req = Math.floor(rand() * 0xffffffff).toString(16).padStart(8, "0");
      const line = `${new Date(t).toISOString()} ${level} ${SERVICES[s]} req=${req} ${pick(MESSAGES[level])}`;
      lines.push(line);
      size += line.length + 1;
    }
    const text = `${lines.join("\n")}\n`;
    writeFileSync(join(dataDir, `host-${String(f + 1).padStart(2, "0")}.log`), text);
    bytes += Buffer.byteLength(text);
  }
  const owners = `service,team\n${SERVICES.map((s) => `${s},${TEAMS[s]}`).join("\n")}\n`;
  writeFileSync(join(dataDir, "owners.csv"), owners);
  return bytes + owners.length;
}

/** ERROR lines per service in log text, the way both agents are asked to count them. */
export function countErrors(text, into = new Map()) {
  for (const m of text.matchAll(/^\S+ ERROR (\S+) /gm)) into.set(m[1], (into.get(m[1]) ?? 0) + 1);
  return into;
}

/** The three services with the most ERROR lines (ties broken by name) and the total. */
export function worstThree(counts) {
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (ranked[2][1] === ranked[3][1]) throw new Error("the generated logs tie at rank 3; change the seed");
  return { worst: ranked.slice(0, 3), total: ranked.reduce((a, [, n]) => a + n, 0), ranked };
}

export const observation = (n) => `${n} ERROR lines on ${DAY}`;

/** The report both agents write; the code-mode program builds the same text in Python. */
export function report(worst, total, owners) {
  return [`# Error review ${DAY}`, "", `${total} ERROR lines in ${LOG_FILES} host logs. Worst services:`, "", ...worst.map(([s, n]) => `- ${s}: ${n} (${owners[s]})`), ""].join("\n");
}

export const parseOwners = (csv) => Object.fromEntries(csv.trim().split("\n").slice(1).map((l) => l.split(",")));

/** The program a code-mode agent writes after reading the signatures it asked for. */
export function agentProgram(ctx, reportName) {
  return [
    "import asyncio, json, re",
    "from collections import Counter",
    "from servers.filesystem import list_directory, read_text_file, write_file",
    "from servers.memory import create_entities, create_relations",
    "from servers.everything import get_sum",
    "",
    `DATA, OUT = ${JSON.stringify(ctx.dataDir)}, ${JSON.stringify(ctx.outDir)}`,
    'listing = (await list_directory(path=DATA))["content"]',
    'files = re.findall(r"^\\[FILE\\] (\\S+\\.log)$", listing, re.M)',
    'texts = await asyncio.gather(*[read_text_file(path=f"{DATA}/{f}") for f in files])',
    "counts = Counter()",
    "for t in texts:",
    '    counts.update(re.findall(r"^\\S+ ERROR (\\S+) ", t["content"], re.M))',
    'csv = (await read_text_file(path=f"{DATA}/owners.csv"))["content"]',
    'owners = dict(l.split(",") for l in csv.strip().split("\\n")[1:])',
    "ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))",
    "worst = ranked[:3]",
    "total = ranked[0][1]",
    "for _, n in ranked[1:]:",
    '    total = int(re.search(r"is (-?\\d+)", await get_sum(a=total, b=n)).group(1))',
    "teams = sorted({owners[s] for s, _ in worst})",
    `await create_entities(entities=[{"name": s, "entityType": "service", "observations": [f"{n} ERROR lines on ${DAY}"]} for s, n in worst]`,
    '    + [{"name": t, "entityType": "team", "observations": []} for t in teams])',
    'await create_relations(relations=[{"from": s, "to": owners[s], "relationType": "owned_by"} for s, _ in worst])',
    `lines = ["# Error review ${DAY}", "", f"{total} ERROR lines in {len(files)} host logs. Worst services:", ""]`,
    'lines += [f"- {s}: {n} ({owners[s]})" for s, n in worst] + [""]',
    `await write_file(path=f"{OUT}/${reportName}", content="\\n".join(lines))`,
    'print(json.dumps({"worst": worst, "total": total}))',
  ].join("\n");
}

/** What the agent looks for (summary), then the signatures it asks for (full), and the tools it must find. */
export const SEARCHES = [
  { query: "list directory and read text files", detail: "summary", needs: ["filesystem.list_directory", "filesystem.read_text_file"] },
  { query: "knowledge graph entities relations", detail: "summary", needs: ["memory.create_entities", "memory.create_relations"] },
  { query: "add two numbers sum", detail: "summary", needs: ["everything.get-sum"] },
  { query: "write file", detail: "summary", needs: ["filesystem.write_file"] },
  { query: "list directory read text file write file", detail: "full", server: "filesystem", needs: ["filesystem.list_directory", "filesystem.read_text_file", "filesystem.write_file"] },
  { query: "create entities create relations", detail: "full", server: "memory", needs: ["memory.create_entities", "memory.create_relations"] },
  { query: "sum", detail: "full", server: "everything", needs: ["everything.get-sum"] },
];

/** Checks what an agent left behind: the report and, in its memory file, the entities and relations. */
export function checkOutcome(who, truth, owners, reportPath, memoryFile) {
  const want = report(truth.worst, truth.total, owners);
  const got = readFileSync(reportPath, "utf8");
  if (got !== want) throw new Error(`${who}: report differs:\n${got}\n--- expected:\n${want}`);
  const graph = readFileSync(memoryFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  for (const [name, n] of truth.worst) {
    if (!graph.some((e) => e.type === "entity" && e.name === name && e.observations?.includes(observation(n)))) throw new Error(`${who}: ${name} is not in the memory graph`);
    if (!graph.some((r) => r.type === "relation" && r.from === name && r.to === owners[name])) throw new Error(`${who}: ${name} owned_by ${owners[name]} is not in the memory graph`);
  }
}
