// `sandgate exec` and `sandgate stdio` under a tool policy: with nobody to ask (a terminal, or a stdio
// client without elicitation and no approvals API) a call that needs approval is refused at once.

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { connectStdio, runCli } from "../fixtures/cli.js";

const MEMORY = resolve(import.meta.dirname, "..", "..", "node_modules/@modelcontextprotocol/server-memory/dist/index.js");
const dir = mkdtempSync(join(tmpdir(), "sandgate-approvals-cli-"));
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const configPath = join(dir, "sandgate.json");
writeFileSync(
  configPath,
  JSON.stringify({
    mcpServers: { memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } } },
    toolPolicy: { default: "allow", rules: { "memory.create_entities": "approve", "memory.delete_entities": "deny" } },
    // A queue nobody can reach would hold the call this long; the terminal must not wait for it.
    approvals: { timeoutS: 600 },
  }),
);

describe("sandgate exec with a tool policy", () => {
  it("refuses a call that needs approval at once, refuses a denied one, and runs an allowed one", async () => {
    const code = [
      "for tool, args in [('memory.create_entities', {'entities': []}), ('memory.delete_entities', {'entityNames': []})]:",
      "    try:",
      "        await call_mcp_tool(tool, args)",
      "    except ToolError as e:",
      "        print(e.kind, e)",
      "g = await call_mcp_tool('memory.read_graph', {})",
      "print('graph', sorted(g))",
    ].join("\n");
    const r = await runCli(["exec", "-l", "python", code], { env: { SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20", SANDGATE_CONFIG: configPath } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ToolDenied .*memory\.create_entities.*nobody can approve at a terminal/m);
    expect(r.stdout).toMatch(/^ToolDenied .*memory\.delete_entities.*toolPolicy\.rules\["memory\.delete_entities"\]: deny/m);
    expect(r.stdout).toMatch(/^graph \['entities', 'relations'\]$/m);
  });
});

describe("sandgate stdio with a tool policy", () => {
  it("refuses at once a call that needs approval when the client has no elicitation", async () => {
    const { client } = await connectStdio({ SANDBOX_DIR: dir, SANDGATE_CONFIG: configPath, SANDGATE_POOL: "python=1,javascript=0,bash=0" }, { name: "approvals-stdio" });
    try {
      const code = "try:\n    await call_mcp_tool('memory.create_entities', {'entities': []})\nexcept ToolError as e:\n    print(e.kind, e)";
      const result = await client.callTool({ name: "execute_code", arguments: { language: "python", code } });
      expect((result.structuredContent as { stdout: string }).stdout).toMatch(/^ToolDenied .*memory\.create_entities.*no approvals queue \(sandgate stdio\)/);
    } finally {
      await client.close();
    }
  });
});
