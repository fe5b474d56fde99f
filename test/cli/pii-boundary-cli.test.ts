// `sandgate exec` with an upstream server: personal data from a tool result is printed as tokens,
// streamed and in --json alike, while the code works on the real value.

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, type CliResult } from "../fixtures/cli.js";

const EVERYTHING = resolve(import.meta.dirname, "..", "..", "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const dir = mkdtempSync(join(tmpdir(), "sandgate-pii-cli-"));
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const configPath = join(dir, "sandgate.json");
writeFileSync(configPath, JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } } }));

function sandgate(args: string[]): Promise<CliResult> {
  return runCli(args, { env: { SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20", SANDGATE_CONFIG: configPath } });
}

const CODE = 'r = await call_mcp_tool("everything.echo", {"message": "vera.pb" + "@example.com"})\nprint(r)\nprint(r.endswith("vera.pb@example.com"))';

describe("sandgate exec", () => {
  it("prints an upstream email as a token, streamed and in --json", async () => {
    const streamed = await sandgate(["exec", "-l", "python", CODE]);
    expect(streamed.code, streamed.stderr).toBe(0);
    expect(streamed.stdout).toBe("Echo: [EMAIL_1]\nTrue\n");
    const json = await sandgate(["exec", "--json", "-l", "python", CODE]);
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout).not.toContain("vera.pb@example.com");
    expect((JSON.parse(json.stdout) as { stdout: string }).stdout).toBe("Echo: [EMAIL_1]\nTrue\n");
  });
});
