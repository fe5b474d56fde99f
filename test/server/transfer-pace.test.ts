// The least pace of a file transfer through the real server: slow or stalled readers and senders
// are ended and give their transfer places back, so another caller's small download still answers.

import { connect, type Socket } from "node:net";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { descendantPids, waitFor } from "../helpers.js";
import { useTestServer } from "../server-helpers.js";

// bodyTimeoutS 1: a transfer must move 16 KiB within every 3 s, and waits at most 6 s for a place.
// Five API keys, five callers: without keys every loopback client is one caller, capped at its own 4 places.
const KEYS = Object.fromEntries(["k1", "k2", "k3", "k4", "other", "owner"].map((name) => [name, `${name}-pace-key-0123456789`]));
const auth = (name: string): Record<string, string> => ({ authorization: `Bearer ${KEYS[name] ?? ""}` });
const f = useTestServer({ pool: { python: 0, javascript: 0, bash: 1 }, env: { SANDGATE_MAX_WORKSPACE_MB: "1024", SANDGATE_MAX_FILE_MB: "512" }, server: { bodyTimeoutS: 1, apiKeys: KEYS } });

/** A raw connection from loopback address `from` that sends `head` and then reads nothing. */
function stalledClient(port: number, from: string, head: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress: from }, () => {
      socket.write(head);
      socket.pause();
      resolve(socket);
    });
    socket.on("error", reject);
  });
}

function get(url: string, from: string, key: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress: from, headers: auth(key) }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("a file transfer's least pace", () => {
  let big = "";
  let small = "";
  beforeAll(async () => {
    // A server-minted session: every key that holds its id may download from it.
    const session = await f.api<{ session_id: string }>("/sessions", { json: {}, headers: auth("owner") });
    const made = await f.api<{ status: string }>("/execute", { json: { language: "bash", session_id: session.body.session_id, code: "truncate -s 300M big.bin" }, headers: auth("owner") });
    expect(made.body.status, JSON.stringify(made.body)).toBe("ok");
    big = `/sessions/${session.body.session_id}/files/content?path=big.bin`;
  });
  afterAll(async () => {
    await f.api(big.replace(/\/files\/content.*$/, ""), { method: "DELETE", headers: auth("owner") });
  });

  it("ends downloads whose readers take nothing, so another caller's 5-byte download answers", async () => {
    const before = descendantPids().length;
    const port = f.server.port;
    const sockets: Socket[] = [];
    try {
      // Four callers (API keys) with four stalled downloads each: all 16 server-wide places.
      for (let a = 1; a <= 4; a++) {
        for (let i = 0; i < 4; i++) sockets.push(await stalledClient(port, `127.0.0.${10 + a}`, `GET ${big} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${KEYS[`k${a}`] ?? ""}\r\n\r\n`));
      }
      const other = "127.0.0.30";
      // The small file's session belongs to the other caller.
      const put = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${f.server.url}/sessions/pace-small/files/content?path=five.txt`, { method: "PUT", localAddress: other, headers: { "content-type": "application/octet-stream", ...auth("other") } }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("error", reject);
        req.end("hello");
      });
      expect(put).toBeLessThan(300);
      small = `${f.server.url}/sessions/pace-small/files/content?path=five.txt`;
      const started = Date.now();
      const got = await get(small, other, "other");
      expect(got.status, got.text).toBe(200);
      expect(got.text).toBe("hello");
      // Today it waits for the stalled readers' minute; the pace ends them within seconds.
      expect(Date.now() - started).toBeLessThan(30_000);
      // The stalled downloads' helpers are gone while their clients still hold the connections.
      expect(await waitFor(() => descendantPids().length <= before, 20_000)).toBe(true);
    } finally {
      for (const s of sockets) s.destroy();
    }
  }, 90_000);

  it("ends an upload that trickles in slower than the least pace, and writes nothing", async () => {
    const port = f.server.port;
    const socket = connect({ host: "127.0.0.1", port, localAddress: "127.0.0.40" });
    const reply: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => reply.push(chunk));
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    socket.on("error", () => undefined);
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write(`PUT /sessions/pace-up/files/content?path=slow.bin HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${KEYS.other ?? ""}\r\ncontent-type: application/octet-stream\r\ncontent-length: 1000000\r\n\r\n`);
    // 100 bytes every 300 ms: never silent for the body timeout (1 s), far below 16 KiB in 3 s.
    const trickle = setInterval(() => socket.write("x".repeat(100)), 300);
    try {
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 30_000))]);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
    const text = Buffer.concat(reply).toString("utf8");
    expect(text).toMatch(/^HTTP\/1\.1 408/);
    expect(text).toContain("least pace");
    const list = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${f.server.url}/sessions/pace-up/files`, { localAddress: "127.0.0.40", headers: auth("other") }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
      });
      req.on("error", reject);
      req.end();
    });
    expect(list).not.toContain("slow.bin");
  }, 60_000);
});
