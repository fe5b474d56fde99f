// MCP file_read of a binary file past the inline limit points an agent at the REST download and
// at working on it in the session, and says what encoding "base64" would cost, instead of
// recommending it (a real server and sandboxes).

import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";
import { withServer } from "../server-helpers.js";

const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

it("a 2 MiB binary gets a pointer to the download and to code, with base64's cost named", async () => {
  await withServer(fx, {}, async (server, api) => {
    const put = await fetch(`${server.url}/sessions/big-binary/files/content?path=big.dat`, { method: "PUT", body: randomBytes(2 * 1048576) });
    expect(put.status).toBe(200);
    const reply = await api<{ result: { content: Array<{ text?: string }>; isError?: boolean } }>("/mcp/execute", {
      json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "file_read", arguments: { session_id: "big-binary", path: "big.dat" } } },
    });
    const text = reply.body.result.content[0]?.text ?? "";
    expect(text).toContain("GET /sessions/big-binary/files/content?path=big.dat");
    expect(text).toContain("work on it with code in the session");
    expect(text).not.toMatch(/or read it with encoding "base64"$/);
  });
});
