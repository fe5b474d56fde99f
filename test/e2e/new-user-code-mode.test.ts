// A new user's code-mode job over real upstream servers: what the agent sees of personal data
// printed the ordinary ways (a Python list, an ellipsis) and the way back, what it is told of a
// configured server that is down, and `sandgate pii` on a live stream.

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectPii } from "../../src/features/pii/index.js";
import { startCodeModeStack, type CodeModeStack } from "../fixtures/code-mode-stack.js";
import { cliPath, runCli } from "../fixtures/cli.js";
import { callTool, connectMcp, toolText } from "../fixtures/mcp-client.js";
import { serverContext } from "../server-helpers.js";
import { startHttpServer } from "../../src/server/index.js";

const PKG = join(process.cwd(), "node_modules/@modelcontextprotocol");

interface WireResult {
  status: string;
  stdout: string;
  stderr: string;
}

let dir: string;
let stack: CodeModeStack | undefined;

async function run(language: string, code: string, sessionId: string): Promise<WireResult> {
  const result = await callTool(stack!.client, "execute_code", { language, code, session_id: sessionId });
  return result.structuredContent as unknown as WireResult;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-new-user-code-mode-"));
  stack = await startCodeModeStack(dir, {
    servers: {
      memory: { command: process.execPath, args: [join(PKG, "server-memory/dist/index.js")], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } },
      // Configured, but exits before the MCP handshake every time: failed, and retried with backoff.
      broken: { command: process.execPath, args: ["-e", "process.stderr.write('not yet'); process.exit(3)"] },
    },
    pool: { python: 1, javascript: 0, bash: 0 },
    name: "new-user-code-mode-test",
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("emails as code prints them", () => {
  it("an email in quotes or after dots is found without the quote or the dots", () => {
    const text = "['bob@example.com'] see...ann@example.org 'o'neil@example.net'";
    const found = detectPii(text, { types: ["email"] }).map((m) => m.value);
    expect(found).toEqual(["bob@example.com", "ann@example.org", "o'neil@example.net"]);
  });

  it("a Python list of emails from server-memory prints as a list of tokens, and a token sent back stores the exact email", async () => {
    const create =
      "await call_mcp_tool('memory.create_entities', {'entities': [{'name': 'Bob', 'entityType': 'person', 'observations': ['bob.smith@corp.example.org']}]})\n" +
      "g = await call_mcp_tool('memory.open_nodes', {'names': ['Bob']})\n" +
      "print(g['entities'][0]['observations'])";
    const first = await run("python", create, "list-repr");
    expect(first.status).toBe("ok");
    expect(first.stdout.trim()).toBe("['[EMAIL_1]']");
    const back = await run("python", "await call_mcp_tool('memory.add_observations', {'observations': [{'entityName': 'Bob', 'contents': ['again [EMAIL_1]']}]})", "list-repr");
    expect(back.status).toBe("ok");
    const stored = readFileSync(join(dir, "memory.jsonl"), "utf8");
    expect(stored).toContain('"again bob.smith@corp.example.org"');
    expect(stored).not.toContain("'bob.smith");
  });
});

describe("a configured server that is down", () => {
  it("a call to its tool says the server is down and when it is retried, as ToolUnavailable, not that no such server exists", async () => {
    const code =
      "try:\n    await call_mcp_tool('broken.echo', {'message': 'x'})\n" +
      "except ToolError as e:\n    print(e.kind)\n    print(str(e))";
    const result = await run("python", code, "down");
    expect(result.status).toBe("ok");
    const [kind, message] = result.stdout.split("\n");
    expect(kind).toBe("ToolUnavailable");
    expect(message).toContain("`broken`");
    expect(message).toMatch(/failed|retrying|starting/);
    expect(message).not.toContain("no upstream server");
  });
});

describe("sandgate tools --search --server (dist/: npm run build first)", () => {
  it("names a configured server that is down as down, not as unknown", async () => {
    const file = join(dir, "tools-down.json");
    writeFileSync(file, JSON.stringify({ mcpServers: { broken: { command: process.execPath, args: ["-e", "process.exit(3)"] } } }));
    const r = await runCli(["tools", "--search", "echo", "--server", "broken", "--config", file], { env: { SANDBOX_DIR: join(dir, "cli-tools") } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("`broken` is not available");
    expect(r.stderr).not.toContain("no upstream server");
  });
});

describe("search_tools in the codemode profile", () => {
  it("points at list_servers() in code, since the profile does not list the list_servers tool, and names a down server as down", async () => {
    const { engine, codeMode, config } = stack!;
    const server = await startHttpServer(serverContext(engine, config, { toolProfile: "codemode" }, codeMode));
    const { client } = await connectMcp(server.url, { name: "new-user-codemode-profile" });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["execute_code", "search_tools"]);
      const none = toolText(await callTool(client, "search_tools", { query: "zzqx frobnicate" }));
      expect(none).toContain("list_servers() in execute_code");
      const down = await client.callTool({ name: "search_tools", arguments: { query: "echo", server: "broken" } }).then(
        (r) => JSON.stringify(r),
        (e: Error) => e.message,
      );
      expect(down).toContain("`broken` is not available");
      expect(down).not.toContain("no upstream server");
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe("the use_sandgate prompt", () => {
  it("tells the model that personal data comes as tokens like [EMAIL_1] that go back in tool arguments as they are", async () => {
    const prompt = await stack!.client.getPrompt({ name: "use_sandgate", arguments: {} });
    const body = (prompt.messages[0]!.content as { text: string }).text;
    expect(body).toContain("[EMAIL_1]");
    expect(body).toMatch(/later tool call's arguments as it is/);
  });
});

describe("content code passes on", () => {
  it("an audio block it cannot pass on is named without pointing at file_read, which the codemode profile does not list", async () => {
    const result = await run("python", "return_content({'type': 'audio', 'data': 'AAAA', 'mimeType': 'audio/wav'})", "audio");
    expect(result.status).toBe("ok");
    expect(result.stdout).toContain("[audio (audio/wav, 3 bytes) not passed on");
    expect(result.stdout).not.toContain("file_read");
  });
});

describe("sandgate pii on a live stream (dist/: npm run build first)", () => {
  it("prints each line's tokens while standard input is still open, as tail -f | sandgate pii needs", async () => {
    const child = spawn(process.execPath, [cliPath(), "pii"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", SANDBOX_DIR: dir }, stdio: ["pipe", "pipe", "pipe"] });
    try {
      let out = "";
      const firstLine = new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString("utf8");
          if (out.includes("\n")) resolve(out);
        });
        child.on("exit", (code) => reject(new Error(`sandgate pii exited (${code}) before printing a line; stdout: ${JSON.stringify(out)}`)));
      });
      child.stdin.write("mail ann@example.com\n");
      // stdin stays open: the line must come out now, not when the input ends.
      expect(await firstLine).toBe("mail [EMAIL_1]\n");
      child.stdin.end("again ann@example.com and bob@example.org\n");
      await new Promise((resolve) => child.once("close", resolve));
      expect(out).toBe("mail [EMAIL_1]\nagain [EMAIL_1] and [EMAIL_2]\n");
    } finally {
      child.kill();
    }
  });

  it("passes a Latin-1 file through byte for byte but for the values it replaces", async () => {
    const child = spawn(process.execPath, [cliPath(), "pii"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", SANDBOX_DIR: dir }, stdio: ["pipe", "pipe", "pipe"] });
    try {
      const chunks: Buffer[] = [];
      child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
      const closed = new Promise((resolve) => child.once("close", resolve));
      // Windows-1252/Latin-1 export: ü is the one byte 0xFC, not valid UTF-8.
      child.stdin.end(Buffer.from("name;email\nM\u00fcller;ann@example.com\nJos\u00e9;ann@example.com\n", "latin1"));
      await closed;
      expect(Buffer.concat(chunks).equals(Buffer.from("name;email\nM\u00fcller;[EMAIL_1]\nJos\u00e9;[EMAIL_1]\n", "latin1"))).toBe(true);
    } finally {
      child.kill();
    }
  });
});
