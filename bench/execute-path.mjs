// node bench/execute-path.mjs [--language python] [--surface rest|mcp|engine]: which of sandgate's own
// modules one warm call runs through, from the HTTP request to the sandbox and back. V8's precise
// coverage is taken around one call (after warm-up calls, so start-up and first-use code do not count)
// and the files of dist/ whose functions ran are listed, by folder. The figure of issue 23
// ("the execute path's file count") is measured with this.

import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createApp } from "../dist/app/index.js";
import { loadConfig } from "../dist/config/index.js";
import { startHttpServer } from "../dist/server/index.js";
import { silentLogger } from "../dist/util/logger.js";

const option = (name, fallback) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : fallback);
const language = option("--language", "python");
const surface = option("--surface", "rest");
if (!["rest", "mcp", "engine"].includes(surface)) throw new Error(`--surface takes rest, mcp or engine, not ${surface}`);
const DIST = resolve(fileURLToPath(new URL("../dist", import.meta.url)));

const dir = mkdtempSync(join(tmpdir(), "sandgate-execute-path-"));
chmodSync(dir, 0o755);
const config = loadConfig({ ...process.env, SANDBOX_DIR: dir, SANDGATE_POOL: "python=2,javascript=0,bash=0" });
// As `sandgate serve` runs it: governed, with the audit log and the observers.
const app = createApp(config, { log: silentLogger, version: "bench" });
await app.start();
const { engine, codeMode, governance, audit, anomalies, metrics } = app;
const server = await startHttpServer({
  engine, codeMode, governance, ...(audit ? { audit } : {}), ...(anomalies ? { anomalies } : {}), ...(metrics ? { metrics } : {}),
  config: { ...config, server: { ...config.server, port: 0 } }, log: silentLogger, version: "bench", startedAt: app.startedAt,
});
const client = new Client({ name: "execute-path", version: "bench" });
if (surface === "mcp") await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));

const code = { python: "1 + 1", javascript: "1 + 1", typescript: "1 + 1", bash: "echo 2" }[language];
async function call() {
  if (surface === "engine") return (await engine.execute({ language, code })).status;
  if (surface === "mcp") return (await client.callTool({ name: "execute_code", arguments: { language, code } })).structuredContent.status;
  const reply = await fetch(`${server.url}/execute`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ language, code }) });
  return (await reply.json()).status;
}

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
const counts = async () => {
  const { result } = await session.post("Profiler.takePreciseCoverage");
  const out = new Map();
  for (const script of result) {
    if (!script.url.startsWith("file://")) continue;
    const path = fileURLToPath(script.url);
    if (!path.startsWith(DIST)) continue;
    out.set(relative(DIST, path), script.functions.reduce((n, f) => n + (f.ranges[0]?.count ?? 0), 0));
  }
  return out;
};
try {
  for (let i = 0; i < 5; i++) if ((await call()) !== "ok") throw new Error("the warm-up call failed");
  // takePreciseCoverage resets the counts: what the next snapshot shows ran between the two.
  await counts();
  const status = await call();
  if (status !== "ok") throw new Error(`the measured call ended ${status}`);
  const ran = [...(await counts())].filter(([, n]) => n > 0).map(([file]) => file).sort();
  const byFolder = new Map();
  for (const file of ran) {
    const folder = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : ".";
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), file.slice(file.lastIndexOf("/") + 1)]);
  }
  process.stdout.write(`One warm ${language} call over ${surface} (governed, audited, as serve runs it) ran code in ${ran.length} of sandgate's modules, in ${byFolder.size} folders:\n\n`);
  for (const [folder, files] of [...byFolder].sort()) process.stdout.write(`- ${folder} (${files.length}): ${files.map((f) => f.replace(/\.js$/, "")).join(", ")}\n`);
} finally {
  await client.close().catch(() => undefined);
  await server.close();
  await app.close();
  rmSync(dir, { recursive: true, force: true });
}
