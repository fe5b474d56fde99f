// The token workload of `npm run bench -- --only tokens`: one fixed job over nine real upstream MCP
// servers, counted (o200k) for a tool-calling agent and for a code-mode agent on sandgate's real MCP server.

import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { countTokens } from "../../dist/execution/index.js";
import { LOG_FILES, SEARCHES, agentProgram, checkOutcome, countErrors, observation, parseOwners, report, worstThree, writeData } from "./job.mjs";
import { UPSTREAM, connectStdio, ensureInstalled, packageOf, startSandgate, stdioServer } from "./upstream.mjs";

const PROFILES = ["full", "codemode"];

const textOf = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

/** A tool as a model sees it (name, description, input schema), and its output schema apart. */
const definitionTokens = (t) => countTokens(JSON.stringify({ name: t.name, description: t.description ?? "", inputSchema: t.inputSchema }));
const outputSchemaTokens = (t) => (t.outputSchema ? countTokens(JSON.stringify(t.outputSchema)) : 0);
const sum = (xs) => xs.reduce((a, b) => a + b, 0);

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
      servers.push({ name: u.name, pkg: `@modelcontextprotocol/${u.pkg}`, version: packageOf(u).version, called: u.called === true, tools, instructions: countTokens(client.getInstructions() ?? "") });
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
    // WORKLOAD_DUMP=DIR keeps what the agent read (the last profile's), to see where the tokens go.
    if (process.env.WORKLOAD_DUMP) writeFileSync(join(process.env.WORKLOAD_DUMP, "tools-list.json"), JSON.stringify({ instructions: client.getInstructions(), tools }, null, 2));
    const search = async (args) => {
      const result = await client.callTool({ name: "search_tools", arguments: args });
      if (result.isError) throw new Error(`search_tools ${JSON.stringify(args)}: ${textOf(result)}`);
      // At detail "full" the agent has a tool only when it got its signature, not just its name.
      const ids = result.structuredContent.tools.filter((t) => args.detail !== "full" || t.signature !== undefined).map((t) => t.id);
      if (process.env.WORKLOAD_DUMP) writeFileSync(join(process.env.WORKLOAD_DUMP, `search-${tally.searches.length + 1}-${args.detail}.txt`), `${JSON.stringify(args)}\n\n${textOf(result)}`);
      tally.searches.push({ args, tokens: countTokens(JSON.stringify(args)) + countTokens(textOf(result)), structured: countTokens(JSON.stringify(result.structuredContent)), hits: result.structuredContent.tools.length, signatures: result.structuredContent.tools.filter((t) => t.signature !== undefined).length });
      return ids;
    };
    for (const { needs, ...args } of SEARCHES) {
      const ids = await search(args);
      // A tool the agent needs but did not get: it asks again for that one tool, by its name.
      for (const id of needs.filter((n) => !ids.includes(n))) {
        const [server, name] = id.split(".");
        const again = await search({ query: name, detail: args.detail, server });
        if (!again.includes(id)) throw new Error(`search_tools did not find ${id}: ${again.join(", ")}`);
      }
    }
    const args = { language: "python", code: agentProgram(ctx, reportName) };
    tally.program = countTokens(JSON.stringify(args));
    const result = await client.callTool({ name: "execute_code", arguments: args }, undefined, { timeout: 300_000 });
    const text = textOf(result);
    tally.response = countTokens(text);
    const wire = result.structuredContent;
    tally.responseStructured = countTokens(JSON.stringify(wire));
    if (result.isError || wire?.status !== "ok") throw new Error(`execute_code: ${text}`);
    return { printed: JSON.parse(wire.stdout.trim()), wire, text, tally, program: args.code };
  } finally {
    await transport.terminateSession().catch(() => undefined);
    await client.close();
  }
}

// ---------------------------------------------------------------------------------------------

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
  lines.push(`| \`search_tools\` arguments and results | - | ${cols((s) => `${n(s.search)} (${s.c.searches.map((x) => `${x.args.detail} ${x.tokens} (${x.hits} tool${x.hits === 1 ? "" : "s"}${x.args.detail === "full" ? `, ${x.signatures} signed` : ""})`).join(", ")})`)} |`);
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
      `Cross-check, \`execute_code\`'s own \`tokens\` field (full profile): returned ${profiles.full.wire.tokens?.returned}, tool_results ${profiles.full.wire.tokens?.tool_results} over ${profiles.full.wire.tool_calls?.length} tool calls. ` +
      `Results are counted as their text content, which is what clients put in the model's context; a client that showed \`structuredContent\` instead would count ` +
      `${PROFILES.map((p) => `${n(sum(sides[p].c.searches.map((x) => x.structured)))} for the searches and ${n(sides[p].c.responseStructured)} for \`execute_code\` (${p})`).join(", ")}.`,
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
