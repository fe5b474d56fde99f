// The PII part of `npm run bench`: what tokenizing costs per KB of text, with every kind on (names
// too), on prose full of personal data, on machine data (lockfiles, CSV, logs) and on a large JSON result.

import { readFileSync, readdirSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PII_TYPES, PiiVault } from "../dist/features/pii/index.js";
import { fmt, pct } from "./stats.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "test", "fixtures", "pii");
const GOAL_MS_PER_KB = 0.5;

const SENTENCES = [
  (i) => `Customer ${i} wrote from ann.lee${i}@mail.example.co.uk asking why order ${1000 + i} has not shipped yet.`,
  (i) => `Please call Mary Jones back on (415) 555-${String(2000 + (i % 8000)).padStart(4, "0")} or +44 20 7946 ${String(i % 10000).padStart(4, "0")} before noon.`,
  () => "The card on file, 4111 1111 1111 1111, was declined twice; the customer will update it next week.",
  () => "Payroll needs the SSN 123-45-6789 and the IBAN DE89 3704 0044 0532 0130 00 to finish onboarding.",
  (i) => `Login attempts came from 203.0.113.${i % 250} and 2001:db8::${(i % 65535).toString(16)} within a minute.`,
  () => "Nothing personal in this sentence: the quarterly numbers went up 12.5% and the team shipped 3 releases.",
  () => "Dr. Okafor approved the change; the ticket moved to review at 10:30 on 2024-01-15 after build 1.4.2.",
];

function prose(bytes) {
  let out = "";
  for (let i = 0; out.length < bytes; i++) out += `${SENTENCES[i % SENTENCES.length](i)} ${i % 5 === 4 ? "\n\n" : ""}`;
  return out;
}

function machineData(bytes) {
  const files = ["package-lock.json", "yarn.lock", "Cargo.lock", "poetry.lock", "metrics.csv", "app-log.txt", "misc.txt"];
  const all = files.map((f) => readFileSync(join(FIXTURES, f), "utf8")).join("\n");
  return all.repeat(Math.ceil(bytes / all.length)).slice(0, bytes);
}

function jsonResult(bytes) {
  const doc = JSON.parse(readFileSync(join(FIXTURES, "tool-result.json"), "utf8"));
  const items = [];
  for (let i = 0; JSON.stringify(items).length < bytes; i++) {
    const item = doc.items[i % doc.items.length];
    items.push({ ...item, assignee: { login: `dev${i}`, email: `dev${i}@example.com` }, body: "Steps: run the job, check the logs, compare with the last release." });
  }
  return JSON.stringify({ total_count: items.length, items }, null, 2);
}

function measure(text, runs) {
  const kb = Buffer.byteLength(text) / 1024;
  for (let i = 0; i < 3; i++) new PiiVault().tokenize(text, { types: PII_TYPES });
  const perKb = [];
  const cpuPerKb = [];
  let entities = 0;
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const result = new PiiVault().tokenize(text, { types: PII_TYPES });
    perKb.push((performance.now() - t0) / kb);
    const cpu = process.cpuUsage(c0);
    cpuPerKb.push((cpu.user + cpu.system) / 1000 / kb);
    entities = result.entities.length;
  }
  return { kb, perKb, cpuPerKb, entities };
}

export async function piiBench({ quick = false } = {}) {
  const runs = quick ? 10 : 40;
  const size = 256 * 1024;
  const cases = [
    ["prose with personal data", prose(size)],
    ["machine data (lockfiles, CSV, logs)", machineData(size)],
    ["JSON tool result", jsonResult(size)],
  ];
  const lines = [
    `## PII tokenization (${new Date().toISOString().slice(0, 10)}, ${quick ? "quick" : "full"} run)`,
    "",
    `Cost of \`PiiVault.tokenize\` with every kind on (${PII_TYPES.join(", ")}), ms per KB (goal <= ${GOAL_MS_PER_KB}):`,
    "",
    "| text | size | entities found | wall p50 ms/KB | wall p95 ms/KB | CPU p50 ms/KB | CPU p95 ms/KB |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const [label, text] of cases) {
    const { kb, perKb, cpuPerKb, entities } = measure(text, runs);
    lines.push(`| ${label} | ${kb.toFixed(0)} KB | ${entities} | ${fmt(pct(perKb, 50), 3)} | ${fmt(pct(perKb, 95), 3)} | ${fmt(pct(cpuPerKb, 50), 3)} | ${fmt(pct(cpuPerKb, 95), 3)} |`);
  }
  // The machine corpus as it is, file by file: nothing in it is personal, so nothing may be found.
  const fixtureFiles = readdirSync(FIXTURES).sort();
  const falseTokens = fixtureFiles.reduce((n, f) => n + new PiiVault().tokenize(readFileSync(join(FIXTURES, f), "utf8"), { types: PII_TYPES }).entities.length, 0);
  lines.push("", `Load average while measuring: ${loadavg()[0].toFixed(1)} on ${availableParallelism()} CPUs (wall time includes waiting for the CPU; CPU time does not).`);
  lines.push("", `False tokens on the machine-data corpus (${fixtureFiles.length} files in test/fixtures/pii): ${falseTokens}.`);
  return lines.join("\n");
}
