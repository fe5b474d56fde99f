// Fixtures for HTTP tests: a real sandgate server on port 0 over a test engine, raw requests
// that may set any header (Host included), server-sent-event parsing and listening-port probes.

import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { request as httpRequest } from "node:http";
import type { SandgateConfig, ServerConfig } from "../src/config/index.js";
import type { Engine } from "../src/execution/index.js";
import { startHttpServer, type RunningServer, type ServerContext } from "../src/server/index.js";
import { silentLogger } from "../src/util/logger.js";

/** The context a test server runs with: the engine's config with `server` overrides and port 0. */
export function serverContext(engine: Engine, config: SandgateConfig, overrides: Partial<ServerConfig> = {}): ServerContext {
  return { engine, config: { ...config, server: { ...config.server, port: 0, ...overrides } }, log: silentLogger, version: "test", startedAt: Date.now() };
}

export function startTestServer(engine: Engine, config: SandgateConfig, overrides: Partial<ServerConfig> = {}): Promise<RunningServer> {
  return startHttpServer(serverContext(engine, config, overrides));
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON; undefined when it is not JSON. */
  json: unknown;
}

export interface RawRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One request with node:http, which (unlike fetch) sends Host and Origin exactly as given. */
export function rawRequest(url: string, options: RawRequestOptions = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? "GET", headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

export interface SseEvent {
  event: string;
  data: string;
}

/** Splits a text/event-stream body into its events (event name defaults to "message"). */
export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.replace(/\r\n/g, "\n").split("\n\n")) {
    let event = "message";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length > 0) events.push({ event, data: data.join("\n") });
  }
  return events;
}

/** TCP ports this process is listening on (from the socket inodes among its open fds). */
export function listeningPorts(): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m?.[1]) inodes.add(m[1]);
    } catch {
      // closed while we looked
    }
  }
  const ports: number[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let lines: string[];
    try {
      lines = readFileSync(table, "utf8").split("\n").slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const cols = line.trim().split(/\s+/);
      // local_address is col 1 ("ADDR:PORT" in hex), st col 3 ("0A" = LISTEN), inode col 9.
      if (cols[3] === "0A" && cols[9] !== undefined && inodes.has(cols[9])) ports.push(parseInt(cols[1]?.split(":")[1] ?? "0", 16));
    }
  }
  return ports.sort((a, b) => a - b);
}
