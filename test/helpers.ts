// Test fixtures: an engine on a throwaway sandbox directory (for a file or one test), host
// process/fd counters, waiting.

import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { loadConfig, type SandgateConfig } from "../src/config/index.js";
import { createApp, type App, type AppOptions } from "../src/app/index.js";
import type { Engine } from "../src/execution/index.js";
import { silentLogger } from "../src/util/logger.js";
import { descendantsOf } from "../src/features/codemode/upstream/process-tree.js";

/**
 * What tests build on createApp by default: silent, version "test", and a bare engine (ungoverned,
 * no upstream servers, no audit, no observers) unless a test asks for more.
 */
export const TEST_APP_OPTIONS: AppOptions = { log: silentLogger, version: "test", governed: false, upstream: false, audit: false, observe: false };

/** The app each test engine belongs to: what serverContext builds a server's context from. */
const appOfEngine = new WeakMap<Engine, App>();

/** createApp with the test defaults under `options`; close it (it is not started: start() it for upstream servers and observers). */
export function createTestApp(config: SandgateConfig, options: AppOptions = {}): App {
  const app = createApp(config, { ...TEST_APP_OPTIONS, ...options });
  appOfEngine.set(app.engine, app);
  return app;
}

/** The app `engine` was made in by createTestApp; undefined for an engine made by hand. */
export function appOf(engine: Engine): App | undefined {
  return appOfEngine.get(engine);
}

export interface TestEngine {
  engine: Engine;
  config: SandgateConfig;
  dir: string;
  /** The app the engine belongs to. */
  app: App;
  close: () => Promise<void>;
}

/** A throwaway SANDBOX_DIR with `env` over a 20 s time limit, and an app over it (bare unless `options` say otherwise). */
export function createTestEngine(env: Record<string, string> = {}, pool = { python: 1, javascript: 1, bash: 1 }, options: AppOptions = {}): TestEngine {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-test-"));
  const config = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20", ...env });
  let app: App;
  try {
    app = createTestApp(config, { pool, ...options });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    engine: app.engine,
    config,
    dir,
    app,
    close: async () => {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One test engine for a test file (or a describe block): created in beforeAll, closed in afterAll.
 * Its fields may be read inside tests and hooks that run after that beforeAll.
 */
export function useTestEngine(...args: Parameters<typeof createTestEngine>): TestEngine {
  let fx: TestEngine | undefined;
  beforeAll(() => {
    fx = createTestEngine(...args);
  });
  afterAll(async () => {
    await fx?.close();
    fx = undefined;
  });
  const ready = (): TestEngine => {
    if (!fx) throw new Error("the test engine is used before beforeAll ran or after afterAll");
    return fx;
  };
  return {
    get engine() {
      return ready().engine;
    },
    get config() {
      return ready().config;
    },
    get dir() {
      return ready().dir;
    },
    get app() {
      return ready().app;
    },
    close: () => ready().close(),
  };
}

/** Host pids whose parent chain leads to this test process (bwrap, runners, anything they left). */
export function descendantPids(root = process.pid): number[] {
  return descendantsOf(root).map((p) => p.pid);
}

/** Open fds of this process, excluding the ones the test runner itself churns. */
export function openFds(): string[] {
  return readdirSync("/proc/self/fd").map((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return "?";
    }
  });
}

/** Processes anywhere on the host whose command line mentions `needle` (a marker the test planted). */
export function hostProcessesMatching(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(needle)) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `body` in a new session of `engine`, stopped afterwards whatever happens. */
export async function withSession<T>(engine: Engine, body: (sessionId: string) => Promise<T>): Promise<T> {
  const session = engine.sessions.create();
  try {
    return await body(session.id);
  } finally {
    await engine.sessions.stop(session.id);
  }
}

export async function waitFor(predicate: () => boolean, timeoutMs = 5000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (predicate()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return predicate();
}
