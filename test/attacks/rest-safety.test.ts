// The guards at the REST API's door, over real HTTP on port 0 with real sandboxes: API key,
// Host and Origin checks, CORS, the per-client cap, the non-loopback refusal, and clients
// that hang up mid-run.

import { describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/index.js";
import { assertSafeToServe, startHttpServer, type RunningServer } from "../../src/server/index.js";
import type { WireExecutionResult } from "../../src/server/wire.js";
import { descendantPids, waitFor } from "../helpers.js";
import { expectError, useRestServer, listeningPorts, rawRequest, serverContext, withServer as withTestServer, type ErrorBody, type Reply } from "../server-helpers.js";

const MAX_CODE_BYTES = 4096;
const MAX_BODY_BYTES = 64 * 1024;

const rest = useRestServer({ maxCodeBytes: MAX_CODE_BYTES, maxBodyBytes: MAX_BODY_BYTES });
const { api } = rest;

const execute = (args: Record<string, unknown>): Promise<Reply<WireExecutionResult>> => api<WireExecutionResult>("/execute", { json: args });

const withServer = (overrides: Partial<ServerConfig>, fn: (s: RunningServer) => Promise<void>): Promise<void> => withTestServer(rest.fx, overrides, fn);

describe("safety at the door", () => {
  it("requires the API key on everything but / and /health", async () => {
    const key = "k".repeat(20);
    await withServer({ apiKey: key }, async (s) => {
      const none = await api("/security/policy", { base: s.url });
      expectError(none, 401, "UNAUTHORIZED");
      expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
      const wrong = await api("/security/policy", { base: s.url, headers: { authorization: `Bearer ${"x".repeat(20)}` } });
      expectError(wrong, 401, "UNAUTHORIZED");
      expect(wrong.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expectError(await api("/execute", { base: s.url, json: { language: "python", code: "1" } }), 401, "UNAUTHORIZED");

      const right = await api("/security/policy", { base: s.url, headers: { authorization: `Bearer ${key}` } });
      expect(right.status).toBe(200);
      expect(right.body).toMatchObject({ http: { api_key_required: true } });
      const run = await api<WireExecutionResult>("/execute", { base: s.url, headers: { authorization: `Bearer ${key}` }, json: { language: "bash", code: "echo ok" } });
      expect(run.body).toMatchObject({ status: "ok", stdout: "ok\n" });

      expect((await api("/", { base: s.url })).status).toBe(200);
      expect((await api("/health", { base: s.url })).status).toBe(200);
    });
  });

  it("refuses a foreign Host header with 403 FORBIDDEN_ORIGIN (DNS rebinding)", async () => {
    const port = rest.server.port;
    const evil = await rawRequest(`${rest.server.url}/health`, { headers: { host: `evil.example:${port}` } });
    expect(evil.status).toBe(403);
    expect((evil.json as ErrorBody).error.code).toBe("FORBIDDEN_ORIGIN");
    const evilPost = await rawRequest(`${rest.server.url}/execute`, {
      method: "POST",
      headers: { host: `evil.example:${port}`, "content-type": "application/json" },
      body: JSON.stringify({ language: "python", code: "1" }),
    });
    expect(evilPost.status).toBe(403);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      expect((await rawRequest(`${rest.server.url}/health`, { headers: { host } })).status, host).toBe(200);
    }
  });

  it("refuses a foreign Origin with 403 and accepts the server's own", async () => {
    const evil = await rawRequest(`${rest.server.url}/languages`, { headers: { origin: "http://evil.example" } });
    expect(evil.status).toBe(403);
    expect((evil.json as ErrorBody).error.code).toBe("FORBIDDEN_ORIGIN");
    expect((evil.json as ErrorBody).error.message).toContain("evil.example");
    const evilPost = await rawRequest(`${rest.server.url}/execute`, {
      method: "POST",
      headers: { origin: "http://evil.example", "content-type": "application/json" },
      body: JSON.stringify({ language: "python", code: "1" }),
    });
    expect(evilPost.status).toBe(403);
    const own = await rawRequest(`${rest.server.url}/languages`, { headers: { origin: rest.server.url } });
    expect(own.status).toBe(200);
  });

  // A page on another local port can make a browser POST a "simple" text/plain request, which
  // needs no CORS preflight; only the Origin check stands in its way.
  it("does not run code for a browser's cross-origin simple request from another local port", async () => {
    const res = await rawRequest(`${rest.server.url}/execute`, {
      method: "POST",
      headers: { origin: "http://localhost:3000", "content-type": "text/plain;charset=UTF-8" },
      body: JSON.stringify({ language: "bash", code: "echo cross-site-ran" }),
    });
    expect(res.text).not.toContain("cross-site-ran");
    expect([403, 415]).toContain(res.status);
  });

  it("sends no CORS headers by default, and answers preflights when CORS is enabled", async () => {
    const preflight = { method: "OPTIONS", headers: { origin: rest.server.url, "access-control-request-method": "POST", "access-control-request-headers": "content-type" } };
    const off = await rawRequest(`${rest.server.url}/execute`, preflight);
    expect(off.headers["access-control-allow-origin"]).toBeUndefined();

    const app = "http://app.example";
    await withServer({ cors: { enabled: true, origins: [app] } }, async (s) => {
      const on = await rawRequest(`${s.url}/execute`, { ...preflight, headers: { ...preflight.headers, origin: app } });
      expect(on.status).toBeLessThan(300);
      expect(on.headers["access-control-allow-origin"]).toBe(app);
      expect(String(on.headers["access-control-allow-methods"])).toContain("POST");
      const get = await rawRequest(`${s.url}/languages`, { headers: { origin: app } });
      expect(get.status).toBe(200);
      expect(get.headers["access-control-allow-origin"]).toBe(app);
    });
  });

  it("caps concurrent executions per client with 429 TOO_MANY_REQUESTS", async () => {
    await withServer({ maxConcurrentPerClient: 1 }, async (s) => {
      const session_id = "rest-slow";
      const slow = api<WireExecutionResult>("/execute", { base: s.url, json: { language: "python", code: "import time\ntime.sleep(2)\n'slept'", session_id } });
      try {
        // The session is busy once the slow call holds the client's only slot and runs.
        expect(await waitFor(() => rest.fx.engine.sessions.listAll().some((x) => x.id === session_id && x.busy), 10_000)).toBe(true);
        const second = await api("/execute", { base: s.url, json: { language: "bash", code: "echo second" } });
        const err = expectError(second, 429, "TOO_MANY_REQUESTS");
        expect(err.data?.limit).toBe(1);
        expect(err.data?.retry_after).toBeGreaterThan(0);
        expect(Number(second.headers.get("retry-after"))).toBe(err.data?.retry_after);
        expect((await slow).body).toMatchObject({ status: "ok", value: "slept" });
        const third = await api<WireExecutionResult>("/execute", { base: s.url, json: { language: "bash", code: "echo third" } });
        expect(third.status).toBe(200);
        expect(third.body.stdout).toBe("third\n");
        // Routes that do not run code are not counted.
        expect((await api("/languages", { base: s.url })).status).toBe(200);
      } finally {
        await slow.catch(() => undefined);
        await api(`/sessions/${session_id}`, { base: s.url, method: "DELETE" });
      }
    });
  });

  it("refuses to listen on 0.0.0.0 without an API key, and nothing listens", async () => {
    const ctx = serverContext(rest.fx.engine, rest.fx.config, { host: "0.0.0.0" });
    expect(() => assertSafeToServe(ctx.config.server)).toThrow(expect.objectContaining({ code: "CONFIG_INVALID" }) as Error);
    const before = listeningPorts();
    expect(before).toContain(rest.server.port);
    await expect(startHttpServer(ctx)).rejects.toMatchObject({ name: "SandgateError", code: "CONFIG_INVALID", message: expect.stringMatching(/API key/) });
    expect(listeningPorts()).toEqual(before);
    // With a key the same bind is allowed by the check.
    expect(() => assertSafeToServe(serverContext(rest.fx.engine, rest.fx.config, { host: "0.0.0.0", apiKey: "k".repeat(20) }).config.server)).not.toThrow();
  });
});

describe("a client that goes away", () => {
  const poolFull = (): boolean => Object.values(rest.fx.engine.poolState()).every((k) => k.ready === k.target && k.starting === 0);

  /** Our descendant process count once the warm pool is full and nothing is starting or retiring. */
  async function settledPidCount(): Promise<number> {
    expect(await waitFor(poolFull, 15_000)).toBe(true);
    let last = descendantPids().length;
    await waitFor(() => {
      const now = descendantPids().length;
      const stable = now === last && poolFull();
      last = now;
      return stable;
    }, 5000);
    return last;
  }

  it("stops the sandbox of a request whose client disconnected", async () => {
    const baseline = await settledPidCount();
    const before = new Set(descendantPids());

    const controller = new AbortController();
    const request = fetch(`${rest.server.url}/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ language: "python", code: "import time\ntime.sleep(30)" }),
      signal: controller.signal,
    });
    // The run has started once the pool has handed out its python sandbox (it refills after release).
    expect(await waitFor(() => rest.fx.engine.poolState().python.ready === 0, 10_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 1000));
    controller.abort();
    await expect(request).rejects.toThrow();

    // The sandbox that ran the code (it existed before, in the pool) is gone, and no extra process remains.
    const gone = await waitFor(() => {
      const now = descendantPids();
      return now.length <= baseline && [...before].some((pid) => !now.includes(pid));
    }, 10_000);
    expect(gone, `descendants now ${descendantPids().length}, baseline ${baseline}`).toBe(true);

    const after = await execute({ language: "python", code: "'alive'" });
    expect(after.body).toMatchObject({ status: "ok", value: "alive" });
  });

  it("stops a streamed run when the client drops the event stream, and frees its slot", async () => {
    await settledPidCount();
    // The run's own processes, by pid: a count against a baseline races with other processes of this worker coming and going.
    const before = new Set(descendantPids());
    await withServer({ maxConcurrentPerClient: 1 }, async (s) => {
      const controller = new AbortController();
      const res = await fetch(`${s.url}/execute?stream=1`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        // A fresh (non-pooled) sandbox: the large flavor does not match the pool's shape.
        body: JSON.stringify({ language: "python", flavor: "large", code: "import time\nprint('started', flush=True)\ntime.sleep(30)" }),
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      const first = (await reader.read()) as { done: boolean; value?: Uint8Array };
      expect(new TextDecoder().decode(first.value)).toContain("started");
      const started = descendantPids().filter((pid) => !before.has(pid));
      expect(started.length).toBeGreaterThan(0);
      controller.abort();

      const alive = (): number[] => started.filter((pid) => descendantPids().includes(pid));
      expect(await waitFor(() => alive().length === 0, 10_000), `still running: ${alive().join(", ")}`).toBe(true);
      // The only slot of this client is free again.
      const next = await api<WireExecutionResult>("/execute", { base: s.url, json: { language: "bash", code: "echo free" } });
      expect(next.status).toBe(200);
      expect(next.body.stdout).toBe("free\n");
    });
  });
});
