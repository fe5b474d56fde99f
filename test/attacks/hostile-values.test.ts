// Values a sandbox hands back that no runner would make: a result frame written by hand on fd 4
// with a value nested millions deep, and stdout that is JSON nested as deep. Answers stay answers.

import { describe, expect, it } from "vitest";
import type { JsonRpcReply } from "../server-helpers.js";
import { useRestServer } from "../server-helpers.js";

const rest = useRestServer({ maxCodeBytes: 1 << 20, maxBodyBytes: 2 << 20 });

/** Python that writes its own result frame for the running call, holding a value nested `depth` deep. */
function forgedResult(depth: number): string {
  return [
    "import os, sandgate, time",
    `d = ${depth}`,
    `body = ('{"type":"result","id":"%s","ok":true,"exitCode":0,"valueKind":"json","value":' % sandgate._channel.run_id + "[" * d + "]" * d + "}").encode()`,
    "v = memoryview(len(body).to_bytes(4, 'big') + body)",
    "while v:",
    "    v = v[os.write(4, v):]",
    "time.sleep(1)",
  ].join("\n");
}

describe("hostile values", () => {
  it("a hand-written result whose value nests 2,000,000 deep is an answer over REST and MCP, not a 500", async () => {
    const code = forgedResult(2_000_000);
    const r = await rest.api<{ status: string; value: unknown; truncated: boolean }>("/execute", { json: { language: "python", code } });
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    expect(r.body.value).toMatch(/nested more than 256 levels/);
    expect(r.body.truncated).toBe(true);
    const mcp = await rest.api<JsonRpcReply>("/mcp/execute", {
      json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "execute_code", arguments: { language: "python", code } } },
    });
    expect(mcp.status, JSON.stringify(mcp.body).slice(0, 300)).toBe(200);
    expect(JSON.stringify(mcp.body)).toMatch(/nested more than 256 levels/);
  });

  it("a value nested 200 deep, as real code may return, comes back whole", async () => {
    const r = await rest.api<{ status: string; value: unknown }>("/execute", { json: { language: "javascript", code: "let v = 1; for (let i = 0; i < 200; i++) v = [v]; v" } });
    expect(r.status).toBe(200);
    let depth = 0;
    for (let v = r.body.value; Array.isArray(v); v = v[0]) depth++;
    expect(depth).toBe(200);
  });

  it("stdout that is JSON nested 1,000,000 deep is shortened, not a server error", async () => {
    const r = await rest.api<{ status: string; stdout: string; truncated: boolean }>("/execute", { json: { language: "python", code: "print('[' * 1000000 + ']' * 1000000)" } });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("ok");
    expect(r.body.truncated).toBe(true);
    expect(r.body.stdout.length).toBeLessThan(100_000);
  });
});
