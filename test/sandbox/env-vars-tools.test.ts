// A secret given as an environment variable, passed by code to an upstream tool call, is masked in
// the result's tool_calls too (the tool id code chose, the error an upstream server sent back).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodeMode } from "../../src/codemode/index.js";
import { loadConfig } from "../../src/config/index.js";
import { Engine } from "../../src/execution/index.js";

const SECRET = "sk-tool-secret-0123456789";
let dir: string;
let codeMode: CodeMode;
let engine: Engine;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-env-tools-"));
  const config = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" });
  codeMode = new CodeMode({ ...config, mcpServers: {} });
  engine = Engine.create(config, { pool: { python: 1, javascript: 0, bash: 0 }, tools: codeMode });
  await codeMode.start();
});
afterAll(async () => {
  await engine.close();
  await codeMode.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("secrets in tool calls", () => {
  it("are masked in the tool id and the error of a failed call", async () => {
    const result = await engine.execute({
      language: "python",
      env: { OPENAI_API_KEY: SECRET },
      code: "import os\ntry:\n    await call_mcp_tool('nope.' + os.environ['OPENAI_API_KEY'], {})\nexcept Exception as e:\n    print(e)",
    });
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]).toMatchObject({ tool: "nope.[masked:OPENAI_API_KEY]", ok: false });
    expect(result.stdout).toContain("[masked:OPENAI_API_KEY]");
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });
});
