// The server-wide transfer places through the real server: HEAD requests and downloads abandoned
// mid-way give their place back, so other callers' uploads and downloads still answer at once.

import { request as httpRequest } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestEngine, descendantPids, waitFor } from "../helpers.js";
import { SandgateError } from "../../src/errors/index.js";
import { useTestServer } from "../server-helpers.js";

const f = useTestServer({ pool: { python: 0, javascript: 0, bash: 1 }, env: { SANDGATE_MAX_WORKSPACE_MB: "1024", SANDGATE_MAX_FILE_MB: "512" } });

/** One request from the loopback address `from` (a caller of its own without API keys). */
function send(url: string, method: string, from: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, localAddress: from, headers: body === undefined ? {} : { "content-type": "application/octet-stream" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A GET whose reader takes the first bytes and then goes away. */
async function abandonedDownload(url: string): Promise<void> {
  const controller = new AbortController();
  const res = await fetch(url, { signal: controller.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  await reader.read();
  controller.abort();
  await reader.read().catch(() => undefined);
}

/** Helper processes (bubblewrap launches) this test process has running now. */
const helpers = (): number => descendantPids().length;

describe("transfer places", () => {
  let id = "";
  let bigUrl = "";
  beforeEach(async () => {
    const session = await f.api<{ session_id: string }>("/sessions", { json: {} });
    id = session.body.session_id;
    // A sparse file: 300 MB to read, no disk to fill.
    const made = await f.api<{ status: string }>("/execute", { json: { language: "bash", session_id: id, code: "truncate -s 300M big.bin" } });
    expect(made.body.status, JSON.stringify(made.body)).toBe("ok");
    bigUrl = `${f.server.url}/sessions/${id}/files/content?path=big.bin`;
  });
  afterEach(async () => {
    await f.api(`/sessions/${id}`, { method: "DELETE" });
  });

  it("are given back by HEAD requests and abandoned downloads of a large file, so another caller's upload and download answer at once", async () => {
    const before = helpers();
    for (let i = 0; i < 24; i++) expect((await send(bigUrl, "HEAD", "127.0.0.1")).status).toBe(200);
    for (let i = 0; i < 20; i++) await abandonedDownload(bigUrl);
    // Another caller (another loopback address without keys) in another session.
    const other = await f.api<{ session_id: string }>("/sessions", { json: {} });
    const small = `${f.server.url}/sessions/${other.body.session_id}/files/content?path=small.txt`;
    const started = Date.now();
    const put = await send(small, "PUT", "127.0.0.7", "hello");
    expect(put.status, put.text).toBeLessThan(300);
    const got = await send(small, "GET", "127.0.0.7");
    expect(got.status, got.text).toBe(200);
    expect(got.text).toBe("hello");
    expect(Date.now() - started).toBeLessThan(10_000);
    await f.api(`/sessions/${other.body.session_id}`, { method: "DELETE" });
    // The killed helpers are gone too, not left behind holding the workspace.
    expect(await waitFor(() => helpers() <= before, 10_000)).toBe(true);
  }, 120_000);
});


describe("a wait for a transfer place", () => {
  it("ends at its time limit with TOO_MANY_REQUESTS saying to retry, and holds nothing after", async () => {
    const t = createTestEngine({ SANDGATE_MAX_FILE_MB: "512", SANDGATE_MAX_WORKSPACE_MB: "1024" }, { python: 0, javascript: 0, bash: 1 });
    const open: Array<{ body: { destroy(): void } }> = [];
    try {
      const owners = ["a", "b", "c", "d", "e"];
      const ids = owners.map((owner) => t.engine.sessions.create(undefined, owner).id);
      for (const [i, owner] of owners.entries()) {
        const ran = await t.engine.execute({ language: "bash", code: "truncate -s 300M big.bin", sessionId: ids[i]!, owner });
        expect(ran.status).toBe("ok");
      }
      // 4 callers with 4 downloads each, none read: every server-wide place (16) is taken.
      const slow = { timeoutMs: 600_000, minRate: { bytes: 16384, windowMs: 600_000 } };
      for (const [i, owner] of owners.slice(0, 4).entries()) {
        for (let k = 0; k < 4; k++) open.push(await t.engine.files.download(ids[i]!, "big.bin", { owner, ...slow }));
      }
      const started = Date.now();
      const waited = await t.engine.files.download(ids[4]!, "big.bin", { owner: "e", ...slow, placeWaitMs: 1000 }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(waited).toBeInstanceOf(SandgateError);
      expect((waited as SandgateError).code).toBe("TOO_MANY_REQUESTS");
      expect((waited as SandgateError).message).toMatch(/retry/);
      expect(Date.now() - started).toBeLessThan(10_000);
      // Its session and its caller's count are free again: once places come back, it downloads.
      for (const file of open.splice(0)) file.body.destroy();
      const file = await t.engine.files.download(ids[4]!, "big.bin", { owner: "e", timeoutMs: 60_000, placeWaitMs: 10_000 });
      file.body.destroy();
    } finally {
      for (const file of open) file.body.destroy();
      await t.close();
    }
  }, 120_000);
});
