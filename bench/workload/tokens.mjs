// The token workload of `npm run bench -- --only tokens`: one fixed job over nine real upstream MCP
// servers, counted (o200k) for a tool-calling agent and for a code-mode agent on sandgate's real MCP server.

import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { countTokens } from "../../dist/execution/index.js";

const MAIN_PKG = join(import.meta.dirname, "../../node_modules/@modelcontextprotocol");
const SERVERS_DIR = join(import.meta.dirname, "servers");
const WORKLOAD_PKG = join(SERVERS_DIR, "node_modules/@modelcontextprotocol");
const CLI = join(import.meta.dirname, "../../dist/cli/main.js");
const PROFILES = ["full", "codemode"];

// ---------------------------------------------------------------------------------------------
// The nine upstream servers: four from sandgate's own dev dependencies, five from bench/workload/servers.
// Servers that need an API key get a dummy one: they list their tools, and the job never calls them.

const UPSTREAM = [
  { name: "everything", root: MAIN_PKG, pkg: "server-everything", args: ["stdio"], called: true },
  { name: "filesystem", root: MAIN_PKG, pkg: "server-filesystem", args: (ctx) => [ctx.dataDir, ctx.outDir], called: true },
  { name: "memory", root: MAIN_PKG, pkg: "server-memory", env: (ctx) => ({ MEMORY_FILE_PATH: ctx.memoryFile }), called: true },
  { name: "github", root: MAIN_PKG, pkg: "server-github", env: () => ({ GITHUB_PERSONAL_ACCESS_TOKEN: "bench-dummy" }) },
  { name: "sequential-thinking", root: WORKLOAD_PKG, pkg: "server-sequential-thinking" },
  { name: "puppeteer", root: WORKLOAD_PKG, pkg: "server-puppeteer" }, // lists its tools without launching a browser
  { name: "slack", root: WORKLOAD_PKG, pkg: "server-slack", env: () => ({ SLACK_BOT_TOKEN: "xoxb-bench-dummy", SLACK_TEAM_ID: "T00000000" }) },
  { name: "google-maps", root: WORKLOAD_PKG, pkg: "server-google-maps", env: () => ({ GOOGLE_MAPS_API_KEY: "bench-dummy" }) },
  { name: "brave-search", root: WORKLOAD_PKG, pkg: "server-brave-search", env: () => ({ BRAVE_API_KEY: "bench-dummy" }) },
];

/** Installs bench/workload/servers on first use (lockfile, no install scripts: puppeteer's would fetch a browser). */
function ensureInstalled() {
  if (existsSync(join(WORKLOAD_PKG, "server-brave-search/package.json"))) return;
  process.stderr.write("bench: installing bench/workload/servers (npm ci --ignore-scripts)\n");
  const r = spawnSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: SERVERS_DIR, stdio: ["ignore", "ignore", "inherit"] });
  if (r.status !== 0) throw new Error(`npm ci in ${SERVERS_DIR} failed (${r.status ?? r.signal})`);
}

function packageOf(u) {
  return JSON.parse(readFileSync(join(u.root, u.pkg, "package.json"), "utf8"));
}

/** How an upstream server is started, for sandgate's config and for the direct client alike. */
function stdioServer(u, ctx) {
  const pkg = packageOf(u);
  const bin = typeof pkg.bin === "string" ? pkg.bin : Object.values(pkg.bin)[0];
  const args = typeof u.args === "function" ? u.args(ctx) : (u.args ?? []);
  return { command: process.execPath, args: [join(u.root, u.pkg, bin), ...args], env: u.env?.(ctx) ?? {} };
}

async function connectStdio(server) {
  const client = new Client({ name: "bench-direct", version: "bench" });
  const transport = new StdioClientTransport({ ...server, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...server.env }, stderr: "ignore" });
  await client.connect(transport);
  return client;
}

const textOf = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

/** A tool as a model sees it (name, description, input schema), and its output schema apart. */
const definitionTokens = (t) => countTokens(JSON.stringify({ name: t.name, description: t.description ?? "", inputSchema: t.inputSchema }));
const outputSchemaTokens = (t) => (t.outputSchema ? countTokens(JSON.stringify(t.outputSchema)) : 0);
const sum = (xs) => xs.reduce((a, b) => a + b, 0);

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
const LOG_FILES = 40;
const LOG_BYTES = 5000;
const DAY = "2026-11-20";

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
function writeData(dataDir) {
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
function countErrors(text, into = new Map()) {
  for (const m of text.matchAll(/^\S+ ERROR (\S+) /gm)) into.set(m[1], (into.get(m[1]) ?? 0) + 1);
  return into;
}

/** The three services with the most ERROR lines (ties broken by name) and the total. */
function worstThree(counts) {
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (ranked[2][1] === ranked[3][1]) throw new Error("the generated logs tie at rank 3; change the seed");
  return { worst: ranked.slice(0, 3), total: sum(ranked.map(([, n]) => n)), ranked };
}

const observation = (n) => `${n} ERROR lines on ${DAY}`;

/** The report both agents write; the code-mode program builds the same text in Python. */
function report(worst, total, owners) {
  return [`# Error review ${DAY}`, "", `${total} ERROR lines in ${LOG_FILES} host logs. Worst services:`, "", ...worst.map(([s, n]) => `- ${s}: ${n} (${owners[s]})`), ""].join("\n");
}

const parseOwners = (csv) => Object.fromEntries(csv.trim().split("\n").slice(1).map((l) => l.split(",")));

// ---------------------------------------------------------------------------------------------
// The tool-calling agent: every upstream definition in its context, every argument written, every result read.

async function directAgent(ctx) {
  const clients = {};
  const servers = [];
  const tally = { arguments: 0, results: 0, resultBytes: 0, calls: 0, byTool: {} };
  try {
    for (const u of UPSTREAM) {
      const client = await connectStdio(stdioServer(u, ctx));
      clients[u.name] = client;
      const { tools } = await client.listTools();
      const version = client.getServerVersion()?.version ?? "?";
      servers.push({ name: u.name, pkg: `@modelcontextprotocol/${u.pkg}`, version: packageOf(u).version, reported: version, called: u.called === true, tools, instructions: countTokens(client.getInstructions() ?? "") });
    }
    const call = async (server, name, args) => {
      tally.calls++;
      const key = `${server}.${name}`;
      tally.byTool[key] = (tally.byTool[key] ?? 0) + 1;
      tally.arguments += countTokens(JSON.stringify(args));
      const result = await clients[server].callTool({ name, arguments: args });
      if (result.isError) throw new Error(`direct ${key}: ${textOf(result)}`);
      const text = textOf(result);
      tally.results += countTokens(text);
      tally.resultBytes += Buffer.byteLength(text);
      return text;
    };
    const listing = await call("filesystem", "list_directory", { path: ctx.dataDir });
    const files = [...listing.matchAll(/^\[FILE\] (\S+\.log)$/gm)].map((m) => m[1]);
    if (files.length !== LOG_FILES) throw new Error(`direct: list_directory showed ${files.length} log files`);
    const counts = new Map();
    for (const file of files) countErrors(await call("filesystem", "read_text_file", { path: join(ctx.dataDir, file) }), counts);
    const owners = parseOwners(await call("filesystem", "read_text_file", { path: join(ctx.dataDir, "owners.csv") }));
    const { worst, ranked } = worstThree(counts);
    // get-sum adds two numbers: the total takes one call per service after the first.
    let total = ranked[0][1];
    for (const [, n] of ranked.slice(1)) total = Number(/is (-?\d+)/.exec(await call("everything", "get-sum", { a: total, b: n }))?.[1]);
    const teams = [...new Set(worst.map(([s]) => owners[s]))].sort();
    await call("memory", "create_entities", {
      entities: [...worst.map(([name, n]) => ({ name, entityType: "service", observations: [observation(n)] })), ...teams.map((name) => ({ name, entityType: "team", observations: [] }))],
    });
    await call("memory", "create_relations", { relations: worst.map(([s]) => ({ from: s, to: owners[s], relationType: "owned_by" })) });
    await call("filesystem", "write_file", { path: join(ctx.outDir, "report-direct.md"), content: report(worst, total, owners) });
    return { worst, total, tally, servers };
  } finally {
    for (const c of Object.values(clients)) await c.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The code-mode agent: sandgate's tools/list, a few search_tools calls, one execute_code.

/** The program a code-mode agent writes after reading the signatures it asked for. */
function agentProgram(ctx, reportName) {
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
const SEARCHES = [
  { query: "list directory and read text files", detail: "summary", needs: ["filesystem.list_directory", "filesystem.read_text_file"] },
  { query: "knowledge graph entities relations", detail: "summary", needs: ["memory.create_entities", "memory.create_relations"] },
  { query: "add two numbers sum", detail: "summary", needs: ["everything.get-sum"] },
  { query: "write file", detail: "summary", needs: ["filesystem.write_file"] },
  { query: "list directory read text file write file", detail: "full", server: "filesystem", needs: ["filesystem.list_directory", "filesystem.read_text_file", "filesystem.write_file"] },
  { query: "create entities create relations", detail: "full", server: "memory", needs: ["memory.create_entities", "memory.create_relations"] },
  { query: "sum", detail: "full", server: "everything", needs: ["everything.get-sum"] },
];

async function codeModeAgent(url, ctx, reportName) {
  const client = new Client({ name: "bench-code-mode-agent", version: "bench" });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`));
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const tally = {
      tools: tools.map((t) => ({ name: t.name, definition: definitionTokens(t), outputSchema: outputSchemaTokens(t) })),
      instructions: countTokens(client.getInstructions() ?? ""),
      searches: [],
      program: 0,
      response: 0,
    };
    const search = async (args) => {
      const result = await client.callTool({ name: "search_tools", arguments: args });
      if (result.isError) throw new Error(`search_tools ${JSON.stringify(args)}: ${textOf(result)}`);
      const ids = result.structuredContent.tools.map((t) => t.id);
      // WORKLOAD_DUMP=DIR keeps what the agent read, to see where the tokens go.
      if (process.env.WORKLOAD_DUMP) writeFileSync(join(process.env.WORKLOAD_DUMP, `search-${tally.searches.length + 1}-${args.detail}.txt`), `${JSON.stringify(args)}\n\n${textOf(result)}`);
      tally.searches.push({ args, tokens: countTokens(JSON.stringify(args)) + countTokens(textOf(result)), hits: ids.length });
      return ids;
    };
    for (const { needs, ...args } of SEARCHES) {
      const ids = await search(args);
      // A tool the agent needs but did not get: it asks again for that one tool.
      for (const id of needs.filter((n) => !ids.includes(n))) {
        const [server, name] = id.split(".");
        const again = await search({ query: name.replaceAll(/[-_]/g, " "), detail: args.detail, server });
        if (!again.includes(id)) throw new Error(`search_tools did not find ${id}: ${again.join(", ")}`);
      }
    }
    const args = { language: "python", code: agentProgram(ctx, reportName) };
    tally.program = countTokens(JSON.stringify(args));
    const result = await client.callTool({ name: "execute_code", arguments: args }, undefined, { timeout: 300_000 });
    const text = textOf(result);
    tally.response = countTokens(text);
    const wire = result.structuredContent;
    if (result.isError || wire?.status !== "ok") throw new Error(`execute_code: ${text}`);
    return { printed: JSON.parse(wire.stdout.trim()), wire, text, tally, program: args.code };
  } finally {
    await transport.terminateSession().catch(() => undefined);
    await client.close();
  }
}

// ---------------------------------------------------------------------------------------------

/**
 * `sandgate serve --port 0` as a user starts it (its own process, config file, env), until it prints its URL;
 * close() stops it with SIGTERM and waits for it to exit.
 */
async function startSandgate(configFile, env) {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--config", configFile], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  let out = "";
  let err = "";
  child.stderr.on("data", (c) => (err = (err + c).slice(-4000)));
  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`sandgate serve did not start in 60 s: ${err}`)), 60_000);
      child.stdout.on("data", (c) => {
        out += c;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`sandgate serve exited (${code}): ${err}`));
      });
    });
    const down = /Upstream MCP servers: (.*)/.exec(out)?.[1].split(", ").filter((s) => !/tools\)$/.test(s)) ?? [];
    if (down.length > 0) throw new Error(`upstream servers not ready: ${down.join(", ")}`);
    return {
      url,
      close: async () => {
        child.kill("SIGTERM");
        await exited;
      },
    };
  } catch (error) {
    child.kill("SIGKILL");
    await exited;
    throw error;
  }
}

/** Checks what an agent left behind: the report and, in its memory file, the entities and relations. */
function checkOutcome(who, truth, owners, reportPath, memoryFile) {
  const want = report(truth.worst, truth.total, owners);
  const got = readFileSync(reportPath, "utf8");
  if (got !== want) throw new Error(`${who}: report differs:\n${got}\n--- expected:\n${want}`);
  const graph = readFileSync(memoryFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  for (const [name, n] of truth.worst) {
    if (!graph.some((e) => e.type === "entity" && e.name === name && e.observations?.includes(observation(n)))) throw new Error(`${who}: ${name} is not in the memory graph`);
    if (!graph.some((r) => r.type === "relation" && r.from === name && r.to === owners[name])) throw new Error(`${who}: ${name} owned_by ${owners[name]} is not in the memory graph`);
  }
}

/**
 * The run's directory. Its path is in most arguments both agents write: a fixed name keeps the counts
 * the same from run to run; when it is taken (another run), a random suffix costs up to ~100 tokens more or less.
 */
function workDir() {
  const fixed = join(tmpdir(), "sandgate-bench-workload");
  let dir = fixed;
  try {
    mkdirSync(fixed);
  } catch (error) {
    if (error.code !== "EEXIST") throw error;
    dir = mkdtempSync(`${fixed}-`);
    process.stderr.write(`bench: ${fixed} exists (another run?); using ${dir}, token counts of paths will differ a little\n`);
  }
  chmodSync(dir, 0o755);
  return dir;
}

/** Runs the workload and returns its figures (see workloadBench for the report). */
export async function runWorkload() {
  ensureInstalled();
  const dir = workDir();
  const ctx = { dataDir: join(dir, "data"), outDir: join(dir, "out"), memoryFile: join(dir, "memory-direct.jsonl") };
  for (const d of [ctx.dataDir, ctx.outDir]) {
    mkdirSync(d);
    chmodSync(d, 0o755);
  }
  const dataBytes = writeData(ctx.dataDir);
  const owners = parseOwners(readFileSync(join(ctx.dataDir, "owners.csv"), "utf8"));
  const logs = readdirSync(ctx.dataDir).filter((f) => f.endsWith(".log"));
  const truth = worstThree(countErrors(logs.map((f) => readFileSync(join(ctx.dataDir, f), "utf8")).join("\n")));
  try {
    const direct = await directAgent(ctx);
    if (JSON.stringify([direct.worst, direct.total]) !== JSON.stringify([truth.worst, truth.total])) throw new Error(`direct agent got ${JSON.stringify([direct.worst, direct.total])}`);
    checkOutcome("direct agent", truth, owners, join(ctx.outDir, "report-direct.md"), ctx.memoryFile);
    process.stderr.write("bench: workload, tool-calling agent done\n");

    const cmCtx = { ...ctx, memoryFile: join(dir, "memory-code-mode.jsonl") };
    const configFile = join(dir, "sandgate.json");
    writeFileSync(configFile, JSON.stringify({ mcpServers: Object.fromEntries(UPSTREAM.map((u) => [u.name, stdioServer(u, cmCtx)])) }, null, 2));
    const profiles = {};
    for (const profile of PROFILES) {
      // A data directory per profile: output types inferred in one run would show in the next one's search results.
      const sandboxDir = join(dir, `sandbox-${profile}`);
      mkdirSync(sandboxDir);
      chmodSync(sandboxDir, 0o755);
      const server = await startSandgate(configFile, { SANDBOX_DIR: sandboxDir, MAX_EXECUTION_TIME: "300", SANDGATE_TOOLS: profile });
      try {
        const cm = await codeModeAgent(server.url, ctx, "report.md");
        if (JSON.stringify([cm.printed.worst, cm.printed.total]) !== JSON.stringify([truth.worst, truth.total])) throw new Error(`${profile}: program printed ${cm.wire.stdout}`);
        checkOutcome(`code-mode agent (${profile})`, truth, owners, join(ctx.outDir, "report.md"), cmCtx.memoryFile);
        // The next profile writes its report and builds its graph afresh.
        rmSync(join(ctx.outDir, "report.md"));
        rmSync(cmCtx.memoryFile);
        profiles[profile] = cm;
      } finally {
        await server.close();
      }
      process.stderr.write(`bench: workload, code-mode agent (${profile}) done\n`);
    }
    const listed = PROFILES.map((p) => profiles[p].tally.tools.length);
    return { direct, profiles, truth, dataBytes, profileHonoured: listed[0] !== listed[1] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const pctFewer = (a, b) => `${((1 - a / b) * 100).toFixed(1)}%`;
const n = (x) => x.toLocaleString("en-US");

/** Runs the workload and returns its Markdown report. */
export async function workloadBench() {
  const { direct, profiles, truth, dataBytes, profileHonoured } = await runWorkload();
  const t = direct.tally;
  const servers = direct.servers.map((s) => ({
    ...s,
    definitions: sum(s.tools.map(definitionTokens)),
    outputSchemas: sum(s.tools.map(outputSchemaTokens)),
  }));
  const toolCount = sum(servers.map((s) => s.tools.length));
  const upstreamDefs = sum(servers.map((s) => s.definitions));
  const upstreamOut = sum(servers.map((s) => s.outputSchemas));
  const upstreamInstr = sum(servers.map((s) => s.instructions));
  const directTotal = upstreamDefs + upstreamInstr + t.arguments + t.results;

  const side = (p) => {
    const c = profiles[p].tally;
    const definitions = sum(c.tools.map((x) => x.definition));
    const outputSchemas = sum(c.tools.map((x) => x.outputSchema));
    const search = sum(c.searches.map((s) => s.tokens));
    const work = search + c.program + c.response;
    return { c, definitions, outputSchemas, search, work, total: work + definitions + c.instructions };
  };
  const sides = Object.fromEntries(PROFILES.map((p) => [p, side(p)]));
  const cols = (f) => PROFILES.map((p) => f(sides[p])).join(" | ");

  const lines = [];
  lines.push(`### Token workload, nine servers (${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC)`);
  lines.push("");
  lines.push(
    `Job: review a day of logs. List the data directory, read ${LOG_FILES} host logs and \`owners.csv\` (${(dataBytes / 1024).toFixed(1)} KB, seeded), count ERROR lines per service, ` +
      `total them with everything's \`get-sum\` (it adds two numbers), record the 3 worst services and their teams in the memory graph (\`create_entities\`, \`create_relations\` owned_by), ` +
      `and write a Markdown report with \`write_file\`. Answer: ${truth.worst.map(([s, k]) => `${s} ${k}`).join(", ")}, total ${truth.total}; the bench checks every agent's report byte for byte and its memory graph.`,
  );
  lines.push("");
  lines.push(
    `Upstream: ${servers.length} real MCP servers over stdio, ${toolCount} tools; servers that need a key got a dummy one (they list their tools; the job calls only everything, filesystem and memory). ` +
      "A definition is what a model is given for a tool: `{name, description, inputSchema}` as JSON; output schemas are counted apart (most clients do not send them to the model). o200k (`countTokens`).",
  );
  lines.push("");
  lines.push("| server | package@version | tools | definitions | outputSchema | called by the job |");
  lines.push("|---|---|---|---|---|---|");
  for (const s of servers) lines.push(`| ${s.name} | ${s.pkg}@${s.version} | ${s.tools.length} | ${n(s.definitions)} | ${n(s.outputSchemas)} | ${s.called ? "yes" : "no"} |`);
  lines.push(`| **all** | | **${toolCount}** | **${n(upstreamDefs)}** | **${n(upstreamOut)}** | |`);
  lines.push("");
  lines.push(
    `The tool-calling agent makes the real calls with one SDK client per server: ${Object.entries(t.byTool).map(([k, v]) => `\`${k}\` x${v}`).join(", ")} — ` +
      `${t.calls} calls, ${(t.resultBytes / 1024).toFixed(1)} KB of results read. The code-mode agent connects to sandgate's MCP server over Streamable HTTP (port 0), ` +
      `reads its \`tools/list\` and instructions, calls \`search_tools\` ${sides.full.c.searches.length} times (${SEARCHES.filter((s) => s.detail === "summary").length} \`summary\`, then \`full\` per server for the tools it uses, no limit), ` +
      `and \`execute_code\` once with a ${profiles.full.program.split("\n").length}-line Python program that does the whole job.`,
  );
  lines.push("");
  lines.push(`| component | tool-calling agent | ${PROFILES.map((p) => `code mode, \`SANDGATE_TOOLS=${p}\``).join(" | ")} |`);
  lines.push(`|---|---|${PROFILES.map(() => "---").join("|")}|`);
  lines.push(`| tool definitions | ${n(upstreamDefs)} (${toolCount} upstream tools) | ${cols((s) => `${n(s.definitions)} (sandgate's ${s.c.tools.length}: ${s.c.tools.map((x) => `${x.name} ${x.definition}`).join(", ")})`)} |`);
  lines.push(`| server instructions (\`initialize\`) | ${n(upstreamInstr)} | ${cols((s) => n(s.c.instructions))} |`);
  lines.push(`| \`search_tools\` arguments and results | - | ${cols((s) => `${n(s.search)} (${s.c.searches.map((x) => `${x.args.detail} ${x.tokens} (${x.hits} tool${x.hits === 1 ? "" : "s"})`).join(", ")})`)} |`);
  lines.push(`| arguments the model writes | ${n(t.arguments)} (${t.calls} calls) | ${cols((s) => `${n(s.c.program)} (the program)`)} |`);
  lines.push(`| results the model reads | ${n(t.results)} | ${cols((s) => `${n(s.c.response)} (\`execute_code\` text)`)} |`);
  lines.push(`| **total, with every definition** | **${n(directTotal)}** | ${cols((s) => `**${n(s.total)}** (${pctFewer(s.total, directTotal)} fewer)`)} |`);
  lines.push(`| total without sandgate's definitions and instructions | ${n(directTotal)} | ${cols((s) => `${n(s.work)} (${pctFewer(s.work, directTotal)} fewer)`)} |`);
  lines.push(`| output schemas, if a client sent them too | +${n(upstreamOut)} | ${cols((s) => `+${n(s.outputSchemas)}`)} |`);
  lines.push(
    `| total with output schemas | ${n(directTotal + upstreamOut)} | ${cols((s) => `${n(s.total + s.outputSchemas)} (${pctFewer(s.total + s.outputSchemas, directTotal + upstreamOut)} fewer)`)} |`,
  );
  lines.push("");
  const goal = (s) => (1 - s.total / directTotal >= 0.97 ? "met" : "missed");
  lines.push(
    `Goal >= 97% fewer with sandgate's definitions included: ${PROFILES.map((p) => `${p} ${pctFewer(sides[p].total, directTotal)} (${goal(sides[p])})`).join(", ")}; ` +
      `97% leaves the code-mode agent ${n(Math.floor(directTotal * 0.03))} tokens.`,
  );
  if (!profileHonoured) lines.push("This build has no `server.toolProfile` setting: both columns are the full tool list.");
  lines.push("");
  lines.push(
    "Each part is counted once. A real tool-calling loop re-sends the definitions and earlier results on every model turn, so the tool-calling figure is a lower bound. " +
      `Cross-check, \`execute_code\`'s own \`tokens\` field (full profile): returned ${profiles.full.wire.tokens?.returned}, tool_results ${profiles.full.wire.tokens?.tool_results} over ${profiles.full.wire.tool_calls?.length} tool calls.`,
  );
  lines.push("");
  lines.push("Per tool, definition tokens (name, description, inputSchema):");
  lines.push("");
  for (const s of servers) lines.push(`- ${s.name}: ${s.tools.map((x) => `${x.name} ${definitionTokens(x)}`).join(", ")}`);
  lines.push("");
  lines.push("What the code-mode agent read back from `execute_code` (full profile):");
  lines.push("");
  lines.push("```");
  lines.push(profiles.full.text);
  lines.push("```");
  return lines.join("\n");
}
