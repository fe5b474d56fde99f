// HEAD of a file download answers with the download's headers and gives back its transfer place
// at once, through the real server: a caller's HEAD requests (curl -I, link checkers) no longer
// use up its 4 transfers for a minute each, leaving its downloads refused with 429.

import { describe, expect, it } from "vitest";
import { request as httpRequest } from "node:http";
import { useTestServer } from "../server-helpers.js";

const f = useTestServer({ pool: { python: 0, javascript: 0, bash: 1 } });

/** A HEAD request with node:http (fetch would do too; this also shows no body comes). */
function head(url: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; bodyBytes: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "HEAD" }, (res) => {
      let bodyBytes = 0;
      res.on("data", (chunk: Buffer) => (bodyBytes += chunk.length));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bodyBytes }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("HEAD of a file download", () => {
  it("answers with the headers and leaves the caller's transfer places free", async () => {
    const session = await f.api<{ session_id: string }>("/sessions", { json: {} });
    const id = session.body.session_id;
    try {
      const data = "x".repeat(3 * 1024 * 1024);
      const put = await f.api(`/sessions/${id}/files/content?path=big.txt`, { method: "PUT", raw: data, headers: { "content-type": "application/octet-stream" } });
      expect(put.status).toBeLessThan(300);
      const url = `${f.server.url}/sessions/${id}/files/content?path=big.txt`;
      for (let i = 0; i < 8; i++) {
        const reply = await head(url);
        expect(reply.status).toBe(200);
        expect(reply.headers["content-length"]).toBe(String(data.length));
        expect(reply.bodyBytes).toBe(0);
      }
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect((await res.text()).length).toBe(data.length);
    } finally {
      await f.api(`/sessions/${id}`, { method: "DELETE" });
    }
  });
});
