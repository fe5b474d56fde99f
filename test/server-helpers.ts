// Fixtures for HTTP tests: a real sandgate server on port 0 over a test engine (for a file or one
// test), JSON and raw requests (any header, Host included), server-sent events, listening ports.

import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { afterAll, beforeAll, expect } from "vitest";
import { request as httpRequest } from "node:http";
import type { SandgateConfig, ServerConfig } from "../src/config/index.js";
import type { App } from "../src/app/index.js";
import type { CodeMode } from "../src/features/codemode/index.js";
import type { Engine } from "../src/execution/index.js";
import { startHttpServer, type RunningServer, type ServerContext } from "../src/server/index.js";
import { appOf, createTestEngine, type TestEngine } from "./helpers.js";

/** The context a server over `app` runs with: its parts, its config with `overrides` over `server`, port 0. */
export function appContext(app: App, overrides: Partial<ServerConfig> = {}, config: SandgateConfig = app.config): ServerContext {
  const { engine, codeMode, governance, metrics, anomalies, audit, log, version, startedAt } = app;
  return {
    engine,
    codeMode,
    config: { ...config, server: { ...config.server, port: 0, ...overrides } },
    governance,
    ...(metrics ? { metrics } : {}),
    ...(anomalies ? { anomalies } : {}),
    ...(audit ? { audit } : {}),
    log,
    version,
    startedAt,
  };
}

/**
 * The context a test server runs with over a test engine's app (createTestEngine, createTestApp):
 * `config` (the engine's, or one derived from it) with `server` overrides and port 0.
 */
export function serverContext(engine: Engine, config: SandgateConfig, overrides: Partial<ServerConfig> = {}, codeMode?: CodeMode): ServerContext {
  const app = appOf(engine);
  if (!app) throw new Error("serverContext needs an engine made by createTestApp or createTestEngine: every system under test is assembled as production assembles it");
  return { ...appContext(app, overrides, config), ...(codeMode ? { codeMode } : {}) };
}

export function startTestServer(engine: Engine, config: SandgateConfig, overrides: Partial<ServerConfig> = {}): Promise<RunningServer> {
  return startHttpServer(serverContext(engine, config, overrides));
}

/** A server over `fx`'s engine with `overrides` (port 0) for the length of `fn`, closed after it. */
export async function withServer(fx: Pick<TestEngine, "engine" | "config">, overrides: Partial<ServerConfig>, fn: (server: RunningServer, api: Api) => Promise<void>): Promise<void> {
  const server = await startTestServer(fx.engine, fx.config, overrides);
  try {
    await fn(server, jsonApi(() => server.url));
  } finally {
    await server.close();
  }
}

/** The Authorization header of the caller holding API key `key`. */
export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
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

export interface ErrorBody {
  error: { code: string; message: string; data?: Record<string, unknown> };
}

export interface JsonRpcReply {
  jsonrpc: string;
  id: string | number | null;
  result?: { content: { type: string; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };
  error?: { code: number; message: string; data?: { code?: string } };
}

export interface Reply<T> {
  status: number;
  headers: Headers;
  body: T;
}

export interface ApiInit {
  method?: string;
  json?: unknown;
  /** A body sent exactly as given. */
  raw?: string;
  headers?: Record<string, string>;
  /** Another server's URL. */
  base?: string;
}

export type Api = <T = unknown>(path: string, init?: ApiInit) => Promise<Reply<T>>;

/** JSON requests with fetch against the server `base()` names; bodies that are not JSON stay text. */
export function jsonApi(base: () => string): Api {
  return async <T = unknown>(path: string, init: ApiInit = {}): Promise<Reply<T>> => {
    const hasBody = init.json !== undefined || init.raw !== undefined;
    const res = await fetch(`${init.base ?? base()}${path}`, {
      method: init.method ?? (hasBody ? "POST" : "GET"),
      headers: { ...(hasBody ? { "content-type": "application/json" } : {}), ...init.headers },
      ...(hasBody ? { body: init.raw ?? JSON.stringify(init.json) } : {}),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON (HTML, SSE): keep the text
    }
    return { status: res.status, headers: res.headers, body: body as T };
  };
}

/** Asserts the {error: {code, message}} shape with this status and code; returns the error. */
export function expectError(reply: Reply<unknown>, status: number, code: string): ErrorBody["error"] {
  expect(reply.status, JSON.stringify(reply.body)).toBe(status);
  expect(reply.headers.get("content-type")).toMatch(/application\/json/);
  const body = reply.body as ErrorBody;
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  return body.error;
}

export interface RestFixture {
  /** Valid inside tests (after beforeAll). */
  readonly fx: TestEngine;
  readonly server: RunningServer;
  readonly api: Api;
}

export interface TestServerOptions {
  /** The engine's environment (over SANDBOX_DIR and a 20 s time limit). */
  env?: Record<string, string>;
  /** Warm sandboxes per runner; one of each unless given. */
  pool?: Parameters<typeof createTestEngine>[1];
  /** Server settings over the engine's config (port 0 always). */
  server?: Partial<ServerConfig>;
}

/** One engine and server on port 0 for a test file (or describe block), torn down after it. */
export function useTestServer(options: TestServerOptions = {}): RestFixture {
  let fx: TestEngine | undefined;
  let server: RunningServer | undefined;
  beforeAll(async () => {
    fx = createTestEngine(options.env ?? {}, options.pool ?? { python: 1, javascript: 1, bash: 1 });
    server = await startTestServer(fx.engine, fx.config, options.server ?? {});
  });
  afterAll(async () => {
    await server?.close();
    await fx?.close();
  });
  const fixture: RestFixture = {
    get fx() {
      if (!fx) throw new Error("the test server is used before beforeAll ran");
      return fx;
    },
    get server() {
      if (!server) throw new Error("the test server is used before beforeAll ran");
      return server;
    },
    api: jsonApi(() => fixture.server.url),
  };
  return fixture;
}

/** useTestServer with the REST size caps the REST tests attack. */
export function useRestServer(options: { maxCodeBytes: number; maxBodyBytes: number }): RestFixture {
  return useTestServer({ env: { SANDGATE_MAX_CODE_BYTES: String(options.maxCodeBytes) }, server: { maxBodyBytes: options.maxBodyBytes } });
}
