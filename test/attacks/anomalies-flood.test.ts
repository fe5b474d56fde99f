// Floods against the anomaly rules through a real server: new identities (peers with bad keys) that
// push a throttled client out of the detector's bounded memory must not lift its throttle.

import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { observeServer, startHttpServer } from "../../src/server/index.js";
import { createTestApp } from "../helpers.js";
import { bearer, jsonApi, serverContext } from "../server-helpers.js";

const KEY = "runner-key-0123456789";

/** GET `url` with a bad key from the loopback address `from` (any 127.x.y.z is this host). */
function badKeyFrom(url: string, from: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/sessions`, { localAddress: from, headers: { authorization: "Bearer not-a-key" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("anomaly throttling under a flood of new identities", () => {
  it("keeps refusing a throttled key after more peers than anomalies.maxClients were seen", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-anomaly-flood-"));
    const base = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" });
    const config = { ...base, anomalies: { ...base.anomalies, burstExecutions: 1, burstWindowS: 600, throttleS: 600, maxClients: 16 } };
    const app = createTestApp(config, { pool: { python: 1, javascript: 0, bash: 0 }, governed: true });
    const observed = observeServer(serverContext(app.engine, config, { apiKeys: { runner: KEY } }));
    const server = await startHttpServer(observed.ctx);
    try {
      const api = jsonApi(() => server.url);
      const run = () => api("/execute", { headers: bearer(KEY), json: { language: "python", code: "1" } });
      expect((await run()).status).toBe(200);
      expect((await run()).status).toBe(200);
      expect((await run()).status).toBe(429);
      for (let i = 2; i < 2 + 40; i += 1) expect(await badKeyFrom(server.url, `127.0.0.${i}`)).toBe(401);
      expect((await run()).status).toBe(429);
    } finally {
      await server.close();
      observed.stop();
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
