// The nine upstream MCP servers of the token workload, how each is started, and `sandgate serve` as a user
// starts it: what bench/workload/tokens.mjs connects the tool-calling agent and the code-mode agent to.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const MAIN_PKG = join(import.meta.dirname, "../../node_modules/@modelcontextprotocol");
const SERVERS_DIR = join(import.meta.dirname, "servers");
const WORKLOAD_PKG = join(SERVERS_DIR, "node_modules/@modelcontextprotocol");
/** The sandgate CLI measured: this checkout's build, or another build's dist/cli/main.js (WORKLOAD_CLI). */
const CLI = process.env.WORKLOAD_CLI ?? join(import.meta.dirname, "../../dist/cli/main.js");

// ---------------------------------------------------------------------------------------------
// The nine upstream servers: four from sandgate's own dev dependencies, five from bench/workload/servers.
// Servers that need an API key get a dummy one: they list their tools, and the job never calls them.

export const UPSTREAM = [
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
export function ensureInstalled() {
  if (existsSync(join(WORKLOAD_PKG, "server-brave-search/package.json"))) return;
  process.stderr.write("bench: installing bench/workload/servers (npm ci --ignore-scripts)\n");
  const r = spawnSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: SERVERS_DIR, stdio: ["ignore", "ignore", "inherit"] });
  if (r.status !== 0) throw new Error(`npm ci in ${SERVERS_DIR} failed (${r.status ?? r.signal})`);
}

export function packageOf(u) {
  return JSON.parse(readFileSync(join(u.root, u.pkg, "package.json"), "utf8"));
}

/** How an upstream server is started, for sandgate's config and for the direct client alike. */
export function stdioServer(u, ctx) {
  const pkg = packageOf(u);
  const bin = typeof pkg.bin === "string" ? pkg.bin : Object.values(pkg.bin)[0];
  const args = typeof u.args === "function" ? u.args(ctx) : (u.args ?? []);
  return { command: process.execPath, args: [join(u.root, u.pkg, bin), ...args], env: u.env?.(ctx) ?? {} };
}

export async function connectStdio(server) {
  const client = new Client({ name: "bench-direct", version: "bench" });
  const transport = new StdioClientTransport({ ...server, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...server.env }, stderr: "ignore" });
  await client.connect(transport);
  return client;
}

/**
 * `sandgate serve --port 0` as a user starts it (its own process, config file, env), until it prints its URL;
 * close() stops it with SIGTERM and waits for it to exit.
 */
export async function startSandgate(configFile, env) {
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
