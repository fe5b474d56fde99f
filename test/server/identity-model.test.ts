// The identity model through the real server on port 0 with real sandboxes: without keys the
// machine is one caller (every loopback address, REST and every MCP session); an MCP session
// owns nothing, so closing one ends no work; a server-minted session id is a capability.

import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/index.js";
import { useTestEngine, waitFor } from "../helpers.js";
import { callTool, connectMcp, toolText } from "../fixtures/mcp-client.js";
import { bearer, expectError, withServer as withTestServer } from "../server-helpers.js";

const fx = useTestEngine({}, { python: 1, javascript: 0, bash: 1 });

const withServer = (overrides: Partial<ServerConfig>, fn: Parameters<typeof withTestServer>[2]): Promise<void> => withTestServer(fx, overrides, fn);

interface FromReply {
  status: number;
  json: Record<string, unknown>;
}

/** One JSON request sent from a chosen loopback source address (127.0.0.2, 127.0.0.3, ...). */
function from(localAddress: string, url: string, method: string, body?: unknown): Promise<FromReply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(url, { method, localAddress, headers: payload ? { "content-type": "application/json" } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown> }));
    });
    req.on("error", reject);
    req.end(payload);
  });
}

const ALICE = "alice-key-0123456789";
const BOB = "bob-key-0123456789ab";

describe("without API keys the machine is one caller", () => {
  it("a session started from 127.0.0.2 is listed, used and counted from 127.0.0.3: another loopback address is not another caller", async () => {
    await withServer({ maxConcurrentPerClient: 1 }, async (s) => {
      const made = await from("127.0.0.2", `${s.url}/sessions`, "POST", { session_id: "two-addresses" });
      expect(made.status).toBe(201);
      expect(made.json).toMatchObject({ session_id: "two-addresses", owner: "local", shared: false });
      const listed = await from("127.0.0.3", `${s.url}/sessions`, "GET");
      expect((listed.json.sessions as { session_id: string }[]).map((x) => x.session_id)).toContain("two-addresses");
      const slow = from("127.0.0.2", `${s.url}/execute`, "POST", { language: "python", session_id: "two-addresses", code: "import time\ntime.sleep(3)\n'slept'" });
      expect(await waitFor(() => fx.engine.sessions.listAll().some((x) => x.id === "two-addresses" && x.busy), 10_000)).toBe(true);
      // One more execution from yet another address is over the one caller's cap of 1.
      const second = await from("127.0.0.4", `${s.url}/execute`, "POST", { language: "bash", code: "echo extra" });
      expect(second.status).toBe(429);
      expect((await slow).json).toMatchObject({ status: "ok", value: "slept" });
      expect((await from("127.0.0.5", `${s.url}/sessions/two-addresses`, "DELETE")).status).toBe(200);
    });
  });

  it("a file uploaded over REST is in the agent's session of the same id over MCP, and the session names its owner", async () => {
    await withServer({}, async (s, api) => {
      const put = await fetch(`${s.url}/sessions/data-task/files/content?path=sales.csv`, { method: "PUT", headers: { "content-type": "text/csv" }, body: "region,total\nnorth,12\nsouth,30\n" });
      expect(put.status).toBe(200);
      const { client } = await connectMcp(s.url, { name: "identity-model-agent" });
      try {
        const summed = await callTool(client, "execute_code", { language: "python", session_id: "data-task", code: "import csv\nsum(int(r['total']) for r in csv.DictReader(open('sales.csv')))" });
        expect(summed.structuredContent).toMatchObject({ status: "ok", value: 42 });
        const read = await callTool(client, "file_read", { session_id: "data-task", path: "sales.csv" });
        expect(toolText(read)).toContain("north,12");
        const sessions = await callTool(client, "get_sessions", { session_id: "data-task" });
        expect(sessions.structuredContent).toMatchObject({ sessions: [{ session_id: "data-task", owner: "local", shared: false }] });
        // What the agent writes, the person downloads.
        await callTool(client, "execute_code", { language: "bash", session_id: "data-task", code: "echo 'total 42' > report.txt" });
      } finally {
        await client.close();
      }
      const report = await fetch(`${s.url}/sessions/data-task/files/content?path=report.txt`);
      expect(await report.text()).toBe("total 42\n");
      expect((await api("/sessions/data-task", { method: "DELETE" })).status).toBe(200);
    });
  });

  it("an MCP session closed at the cap ends none of its caller's sessions and jobs", async () => {
    await withServer({ maxMcpSessions: 2 }, async (s, api) => {
      const first = await connectMcp(s.url, { name: "identity-model-first" });
      await callTool(first.client, "execute_code", { language: "python", session_id: "survivor", code: "x = 41" });
      const job = await callTool(first.client, "execute_code", { language: "bash", session_id: "survivor-job", code: "sleep 30", background: true });
      const jobId = (job.structuredContent as { job_id?: string }).job_id;
      expect(jobId).toMatch(/^job_/);
      const second = await connectMcp(s.url, { name: "identity-model-second" });
      const third = await connectMcp(s.url, { name: "identity-model-third" });
      try {
        // The first, least recently used, gave way to the third.
        await expect(first.client.listTools()).rejects.toThrow(/404|not found/i);
        const still = await callTool(third.client, "execute_code", { language: "python", session_id: "survivor", code: "x + 1" });
        expect(still.structuredContent).toMatchObject({ status: "ok", value: 42 });
        const polled = await callTool(third.client, "get_job", { job_id: jobId });
        expect(polled.structuredContent).toMatchObject({ status: "running" });
        await callTool(third.client, "stop_job", { job_id: jobId });
      } finally {
        await Promise.all([first.client.close(), second.client.close(), third.client.close()]);
      }
      for (const id of ["survivor", "survivor-job"]) expect((await api(`/sessions/${id}`, { method: "DELETE" })).status).toBe(200);
    });
  });
});

describe("a session id the server minted is a capability", () => {
  it("another API key holding it works in the session, while an id a key named stays that key's alone", async () => {
    await withServer({ apiKeys: { alice: ALICE, bob: BOB } }, async (_s, api) => {
      const as = (key: string): { headers: Record<string, string> } => ({ headers: bearer(key) });
      const minted = await api<{ session_id: string; owner: string; shared: boolean }>("/sessions", { json: {}, ...as(ALICE) });
      expect(minted.status).toBe(201);
      expect(minted.body).toMatchObject({ owner: "key:alice", shared: true });
      const id = minted.body.session_id;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const wrote = await api(`/execute`, { json: { language: "python", session_id: id, code: "open('from-alice.txt', 'w').write('hi bob')" }, ...as(ALICE) });
      expect(wrote.body).toMatchObject({ status: "ok" });

      // Bob was given the id: he reads, writes and runs code in the same session.
      expect((await api(`/sessions/${id}`, as(BOB))).body).toMatchObject({ session_id: id, owner: "key:alice", shared: true });
      const read = await api<{ content: string }>(`/sessions/${id}/files/content?path=from-alice.txt&encoding=utf8`, as(BOB));
      expect(read.body.content).toBe("hi bob");
      expect((await api(`/sessions/${id}/files/content`, { method: "PUT", json: { path: "from-bob.txt", content: "hi alice" }, ...as(BOB) })).status).toBe(200);
      const seen = await api(`/execute`, { json: { language: "bash", session_id: id, code: "cat from-bob.txt" }, ...as(BOB) });
      expect(seen.body).toMatchObject({ status: "ok", stdout: "hi alice" });
      // It is still Alice's session: Bob's list holds only his own.
      const bobs = await api<{ sessions: unknown[] }>("/sessions", as(BOB));
      expect(bobs.body.sessions).toEqual([]);

      // An id Alice named is hers alone: Bob gets the answer of an id no one uses.
      await api("/sessions", { json: { session_id: "alice-named" }, ...as(ALICE) });
      expect((await api("/sessions/alice-named", as(ALICE))).body).toMatchObject({ shared: false });
      expectError(await api("/sessions/alice-named", as(BOB)), 404, "SESSION_NOT_FOUND");
      expectError(await api("/sessions/alice-named/files", as(BOB)), 404, "SESSION_NOT_FOUND");

      // A holder may stop it; its owner is then told it ended.
      expect((await api(`/sessions/${id}`, { method: "DELETE", ...as(BOB) })).status).toBe(200);
      expectError(await api(`/sessions/${id}`, as(ALICE)), 410, "SESSION_EXPIRED");
      expect((await api("/sessions/alice-named", { method: "DELETE", ...as(ALICE) })).status).toBe(200);
    });
  });
});

