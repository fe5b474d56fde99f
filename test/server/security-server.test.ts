// Security analysis and the code policy through the real server on port 0: MCP with the SDK
// client (blocked runs, warnings, analyze_code, blocked background jobs) and the REST routes.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, type SandgateConfig } from "../../src/config/index.js";
import type { App } from "../../src/app/index.js";
import type { Engine } from "../../src/execution/index.js";
import { startHttpServer, type RunningServer } from "../../src/server/index.js";
import { callTool, connectMcp, toolText } from "../fixtures/mcp-client.js";
import { createTestApp } from "../helpers.js";
import { appContext, jsonApi, type Api } from "../server-helpers.js";
import { REVERSE_SHELL, UNPICKLE } from "../fixtures/risky-code.js";

interface Served {
  app: App;
  engine: Engine;
  server: RunningServer;
  api: Api;
  config: SandgateConfig;
  dir: string;
}

async function serve(env: Record<string, string>): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-security-"));
  const config = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20", ...env });
  const app = createTestApp(config, { pool: { python: 1, javascript: 0, bash: 0 }, governed: true });
  await app.start();
  const server = await startHttpServer(appContext(app));
  return { app, engine: app.engine, server, config, dir, api: jsonApi(() => server.url) };
}

async function stop(served: Served | undefined): Promise<void> {
  if (!served) return;
  await served.server.close();
  await served.app.close();
  rmSync(served.dir, { recursive: true, force: true });
}

describe("with governance on", () => {
  let on: Served | undefined;
  beforeAll(async () => {
    on = await serve({});
  });
  afterAll(() => stop(on));
  const served = (): Served => {
    if (!on) throw new Error("no server");
    return on;
  };

  it("a blocked run over MCP is an isError result with POLICY_BLOCKED naming the finding and its line", async () => {
    const { client } = await connectMcp(served().server.url);
    try {
      const result = await callTool(client, "execute_code", { language: "python", code: REVERSE_SHELL });
      expect(result.isError).toBe(true);
      const text = toolText(result);
      expect(text).toMatch(/POLICY_BLOCKED/);
      expect(text).toMatch(/reverse-shell/);
      expect(text).toMatch(/at line [345]/);
    } finally {
      await client.close();
    }
  });

  it("a run the policy warns about carries security in the structured result and one line in the text", async () => {
    const { client } = await connectMcp(served().server.url);
    try {
      const result = await callTool(client, "execute_code", { language: "python", code: UNPICKLE });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ status: "ok", security: { action: "warn", level: "high" } });
      expect(typeof result.structuredContent.execution_id).toBe("string");
      const security = result.structuredContent.security as { findings: Array<Record<string, unknown>> };
      expect(security.findings[0]).toMatchObject({ category: "deserialization", line: 2, end_line: 2 });
      expect(security.findings[0]).toHaveProperty("rule_id");
      expect(toolText(result)).toMatch(/\[security: risk \d+ \(high\), warn: deserialization at line 2/);
      // Benign code: security in the structured result, nothing in the text.
      const benign = await callTool(client, "execute_code", { language: "python", code: "2 + 2" });
      expect(benign.structuredContent).toMatchObject({ value: 4, security: { risk: 0, action: "allow" } });
      expect(toolText(benign)).not.toMatch(/security/);
    } finally {
      await client.close();
    }
  });

  it("a background job the policy blocks is refused at once over MCP, with no job id", async () => {
    const { client } = await connectMcp(served().server.url);
    try {
      const result = await callTool(client, "execute_code", { language: "python", code: REVERSE_SHELL, background: true });
      expect(result.isError).toBe(true);
      expect(toolText(result)).toMatch(/POLICY_BLOCKED/);
      const jobs = await callTool(client, "get_job", {});
      expect(JSON.stringify(jobs.structuredContent)).not.toMatch(/job_/);
    } finally {
      await client.close();
    }
  });

  it("analyze_code analyses without running and tells the policy's action", async () => {
    const { client } = await connectMcp(served().server.url);
    try {
      const tools = await client.listTools();
      const tool = tools.tools.find((t) => t.name === "analyze_code");
      expect(tool?.annotations?.readOnlyHint).toBe(true);
      const result = await callTool(client, "analyze_code", { language: "Python", code: REVERSE_SHELL });
      expect(result.structuredContent).toMatchObject({ language: "python", level: "critical", action: "block" });
      expect(result.structuredContent.metrics).toMatchObject({ lines: 5 });
      expect(toolText(result)).toMatch(/critical py\.reverse-shell/);
    } finally {
      await client.close();
    }
  });

  it("POST /security/analyze answers risk, level, action, findings and metrics; a blocked POST /execute is 403", async () => {
    const reply = await served().api<Record<string, unknown>>("/security/analyze", { json: { language: "py", code: UNPICKLE } });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ language: "python", action: "warn", level: "high", metrics: { lines: 2, imports: 1 } });
    expect((reply.body.findings as unknown[]).length).toBeGreaterThan(0);
    expect(reply.body.risk).toBeGreaterThan(0);
    const unknown = await served().api<{ error: { code: string } }>("/security/analyze", { json: { language: "cobol", code: "x" } });
    expect(unknown.body.error.code).toBe("UNKNOWN_LANGUAGE");
    const blocked = await served().api<{ error: { code: string; message: string; data: { findings: unknown[] } } }>("/execute", { json: { language: "python", code: REVERSE_SHELL } });
    expect(blocked.status).toBe(403);
    expect(blocked.body.error.code).toBe("POLICY_BLOCKED");
    expect(blocked.body.error.data.findings.length).toBeGreaterThan(0);
    const ran = await served().api<Record<string, unknown>>("/execute", { json: { language: "python", code: UNPICKLE } });
    expect(ran.body).toMatchObject({ status: "ok", security: { action: "warn" } });
  });

  it("GET /security/policy shows the code policy: level, its table and the overrides", async () => {
    const reply = await served().api<{ code_policy: Record<string, unknown> }>("/security/policy");
    expect(reply.body.code_policy).toMatchObject({ enabled: true, level: "standard", table: { critical: "block", high: "warn", medium: "warn", low: "allow" }, categories: {} });
  });
});

describe("with governance off", () => {
  let off: Served | undefined;
  beforeAll(async () => {
    off = await serve({ SANDGATE_GOVERNANCE: "off" });
  });
  afterAll(() => stop(off));

  it("runs what the policy would block, results carry no security, and analysis still answers without an action", async () => {
    if (!off) throw new Error("no server");
    const { client } = await connectMcp(off.server.url);
    try {
      const result = await callTool(client, "execute_code", { language: "python", code: UNPICKLE });
      expect(result.structuredContent.status).toBe("ok");
      expect(result.structuredContent).not.toHaveProperty("security");
      expect(result.structuredContent).not.toHaveProperty("execution_id");
    } finally {
      await client.close();
    }
    const analysed = await off.api<Record<string, unknown>>("/security/analyze", { json: { language: "python", code: UNPICKLE } });
    expect(analysed.status).toBe(200);
    expect(analysed.body).not.toHaveProperty("action");
    expect(analysed.body.level).toBe("high");
  });
});
