// One-shot commands on an admin's terminal: when an upstream server fails, `sandgate tools` says so
// in its output and in one readable stderr line, never a raw JSON log line above it.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readableLine } from "../../src/cli/cli-logger.js";
import { runCli } from "../fixtures/cli.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-cli-logs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("CLI logs", () => {
  it("sandgate tools with an upstream that cannot start prints no JSON line, and one readable line naming the server", async () => {
    const config = join(dir, "sandgate.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { broken: { command: "/nonexistent/upstream" } } }));
    const r = await runCli(["tools", "--config", config], { env: { SANDBOX_DIR: join(dir, "sd") } });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("broken (stdio): failed");
    const lines = r.stderr.split("\n").filter(Boolean);
    expect(lines.filter((l) => l.trimStart().startsWith("{"))).toEqual([]);
    expect(lines).toContain("sandgate: error: upstream server failed (server broken; could not start: spawn /nonexistent/upstream ENOENT)");
  }, 60_000);

  it("an upstream's control characters in a logged message reach the terminal escaped", () => {
    expect(readableLine(JSON.stringify({ level: 40, msg: "upstream said", err: { message: "\u001b]0;owned\u0007" } }))).toBe("sandgate: warn: upstream said (\\x1b]0;owned\\x07)");
  });
});
