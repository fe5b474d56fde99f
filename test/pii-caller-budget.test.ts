// The PII vault budget per caller, through a real server with two API keys and a real PII-enabled
// upstream: one key filling its vaults leaves the server-wide room to the others.

import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodeMode } from "../src/codemode/index.js";
import { loadConfig, upstreamServerSchema } from "../src/config/index.js";
import { Engine } from "../src/execution/index.js";
import { startHttpServer, type RunningServer } from "../src/server/index.js";
import { serverContext } from "./server-helpers.js";

const EVERYTHING = join(process.cwd(), "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const FLOODER = "flooder-key-0123456789abcdef";
const OTHER = "other-key-0123456789abcdef0";

let dir: string;
let codeMode: CodeMode;
let engine: Engine;
let server: RunningServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-pii-budget-"));
  chmodSync(dir, 0o755);
  const base = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" });
  // A server-wide room of 8 values, 5 per caller: the same shares as the defaults, scaled down.
  const config = {
    ...base,
    pii: { ...base.pii, maxTotalValues: 8, maxCallerValues: 5 },
    mcpServers: { everything: upstreamServerSchema.parse({ command: process.execPath, args: [EVERYTHING, "stdio"] }) },
  };
  codeMode = new CodeMode(config, {});
  engine = Engine.create(config, { pool: { python: 1, javascript: 0, bash: 0 }, tools: codeMode });
  await codeMode.start();
  server = await startHttpServer(serverContext(engine, config, { apiKeys: { flooder: FLOODER, other: OTHER } }, codeMode));
}, 60_000);

afterAll(async () => {
  await server?.close();
  await engine?.close();
  await codeMode?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function execute(key: string, code: string, sessionId: string): Promise<{ status: string; stdout: string }> {
  const res = await fetch(`${server.url}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ language: "python", code, session_id: sessionId }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { status: string; stdout: string };
}

/** Code that learns `n` emails of `who` from tool results, one per call, and prints them. */
const learn = (who: string, n: number): string =>
  `for i in range(${n}):\n    r = await call_mcp_tool("everything.echo", {"message": f"${who}{i}@example.com"})\n    print(r)`;

describe("PII vault budgets per caller", () => {
  it("one key filling its vaults leaves the others' personal data tokenized, and their tokens go back to tools", async () => {
    // The flooder in two sessions: 5 values tokenized, then its own budget is spent.
    const a = await execute(FLOODER, learn("flood", 4), "f1");
    const b = await execute(FLOODER, learn("more", 4), "f2");
    expect(a.stdout).toBe([1, 2, 3, 4].map((n) => `Echo: [EMAIL_${n}]\n`).join(""));
    expect(b.stdout).toBe("Echo: [EMAIL_1]\n" + "Echo: [EMAIL_REDACTED]\n".repeat(3));
    // The other key still has room: tokens, and a token passed back reaches the tool as the value.
    const other = await execute(OTHER, `${learn("ann", 2)}\nr = await call_mcp_tool("everything.echo", {"message": "[EMAIL_2]"})\nprint(r == "Echo: ann1@example.com")`, "o1");
    expect(other.stdout).toBe("Echo: [EMAIL_1]\nEcho: [EMAIL_2]\nTrue\n");
    // Its session ended, the flooder has room again.
    await fetch(`${server.url}/sessions/f1`, { method: "DELETE", headers: { authorization: `Bearer ${FLOODER}` } });
    const c = await execute(FLOODER, learn("again", 1), "f3");
    expect(c.stdout).toBe("Echo: [EMAIL_1]\n");
  });
});
