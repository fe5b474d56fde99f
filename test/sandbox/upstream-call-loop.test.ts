// A program calling an upstream tool in a loop, as `sandgate serve` runs it (governance and the audit
// log on): every call answered with its own result in order, every call audited, and the inferred
// output schema's count, rewritten in the background past the first responses, on disk once closed.

import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/app/index.js";
import { loadConfig, upstreamServerSchema } from "../../src/config/index.js";
import type { AuditLog } from "../../src/store/index.js";
import { createTestApp } from "../helpers.js";

const EVERYTHING = join(process.cwd(), "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const CALLS = 150;

let dir: string;
let app: App;
let audit: AuditLog;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-call-loop-"));
  chmodSync(dir, 0o755);
  const base = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "60", SANDGATE_MAX_TOOL_CALLS: "1000" });
  const config = { ...base, mcpServers: { everything: upstreamServerSchema.parse({ command: process.execPath, args: [EVERYTHING, "stdio"] }) } };
  app = createTestApp(config, { pool: { python: 0, javascript: 0, bash: 0 }, governed: true, upstream: true, audit: true, warmAnalyzer: false });
  audit = app.audit!;
  await app.start();
}, 60_000);

afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

const LOOPS: Record<string, string> = {
  python: [
    "out = []",
    `for i in range(${CALLS}):`,
    '    out.append(await call_mcp_tool("everything.echo", {"message": f"m{i}"}))',
    "print('\\n'.join(out))",
  ].join("\n"),
  javascript: [
    "const out = [];",
    `for (let i = 0; i < ${CALLS}; i++) out.push(await callMCPTool("everything.echo", { message: \`m\${i}\` }));`,
    "console.log(out.join('\\n'));",
  ].join("\n"),
};

describe(`${CALLS} sequential upstream calls from one program`, () => {
  for (const language of ["python", "javascript"]) {
    it(`in ${language}: each gets its own result, in order, and each is audited`, async () => {
      const sessionId = app.engine.sessions.create().id;
      const result = await app.engine.execute({ language, sessionId, code: LOOPS[language]! });
      expect(result.status, `${result.stderr} ${JSON.stringify(result.error)}`).toBe("ok");
      expect(result.stdout.trim().split("\n")).toEqual(Array.from({ length: CALLS }, (_, i) => `Echo: m${i}`));
      expect(result.toolCalls).toHaveLength(CALLS);
      expect(result.toolCalls.every((c) => c.ok && c.tool === "everything.echo")).toBe(true);
      const rows = audit.query({ kind: "tool_call", sessionId, limit: 500, order: "asc" }).rows;
      expect(rows).toHaveLength(CALLS);
      expect(rows.every((r) => r.tool === "everything.echo" && r.status === "ok")).toBe(true);
      expect(audit.verify().ok).toBe(true);
    }, 60_000);
  }

  it("shows the inferred output schema's count in the wrappers, and keeps it on disk once closed", async () => {
    // 300 responses: the first 20 merged, then every hundredth (the 100th, 200th and 300th).
    // The wrappers as sandboxes see them (as root they live in a tmpfs view of their own, gone at close).
    const wrapper = await app.engine.execute({ language: "bash", code: "cat /sandgate/tools/python/servers/everything/__init__.py" });
    expect(wrapper.stdout).toContain("inferred from 23 responses");
    await app.close();
    const saved = JSON.parse(readFileSync(join(dir, "inferred-output-schemas.json"), "utf8")) as Record<string, { "x-inferred-from"?: number }>;
    expect(saved["everything.echo"]?.["x-inferred-from"]).toBe(23);
  }, 30_000);
});
