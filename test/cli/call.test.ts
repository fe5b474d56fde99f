// `sandgate call`: every declared operation from a terminal, its flags derived from the operation's
// input schema; in the command's own sandgate, or on a running server with --url.

import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/features/index.js";
import { runCli, type CliResult } from "../fixtures/cli.js";
import { useTestServer } from "../server-helpers.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-cli-call-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sandgate(args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  return runCli(["call", ...args], { input: options.input ?? "", env: { SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20", ...options.env } });
}

const json = <T>(r: CliResult): T => JSON.parse(r.stdout) as T;

describe("sandgate call in the command's own sandgate", () => {
  it("lists every declared operation with its scope, and exits 2 when none is named", async () => {
    const r = await sandgate([]);
    expect(r.code).toBe(2);
    for (const operation of OPERATIONS) expect(r.stdout).toMatch(new RegExp(`^  ${operation.id.replace(".", "\\.")} +${operation.scope} +`, "m"));
  });

  it("shows an operation's fields as flags, each with its description, the required ones marked, an enum's values listed", async () => {
    const r = await sandgate(["execute.code", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: sandgate call execute.code CODE LANGUAGE");
    expect(r.stdout).toMatch(/--language TEXT +\(required\) one of python, py, /);
    expect(r.stdout).toMatch(/--session-id TEXT +Reuse to keep variables/);
    expect(r.stdout).toMatch(/--timeout N +Seconds/);
    expect(r.stdout).toMatch(/--background +Run as a job/);
  });

  it("runs code with the required fields by position or by flag, and prints the result as REST gives it", async () => {
    const r = await sandgate(["execute.code", "print(6 * 7)", "--language", "py"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(json<{ status: string; stdout: string; security: { action: string } }>(r)).toMatchObject({ status: "ok", stdout: "42\n", security: { action: "allow" } });
    const flagged = await sandgate(["execute.command", "--command", "echo $((6*7))", "--timeout=5", "--background", "false"]);
    expect(json<{ stdout: string; status: string }>(flagged)).toMatchObject({ status: "ok", stdout: "42\n" });
  });

  it("takes the whole input as JSON (--input, or - for standard input), flags over it", async () => {
    const r = await sandgate(["execute.code", "--input", "-", "--language", "bash"], { input: '{"language": "python", "code": "echo $((2+3))"}' });
    expect(json<{ stdout: string }>(r).stdout).toBe("5\n");
    const analysed = await sandgate(["governance.analyze", "--input", '{"language": "bash", "code": "rm -rf / --no-preserve-root"}']);
    expect(json<{ action: string; level: string }>(analysed)).toMatchObject({ action: "block", level: "critical" });
  });

  it("refuses bad input before anything starts, exit 2 with one line naming the field", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["nope"], /no operation "nope"; run `sandgate call` for the list/],
      [["execute.code", "--bogus", "1"], /execute\.code has no field "bogus"; its fields: --code, --language, --session-id/],
      [["execute.code", "x", "--language", "python", "--timeout", "soon"], /--timeout takes a number, not "soon"/],
      [["execute.code", "x", "--language", "python", "--env", "A=1"], /--env takes JSON, e\.g\. '\{"NAME":"value"\}'/],
      [["execute.code", "--language", "python"], /invalid arguments for tool execute\.code: code: Required/],
      [["execute.code", "a", "python", "extra"], /"extra" is one too many/],
      [["execute.code", "x", "--language", "cobol"], /cobol/],
      [["sessions.list", "--input", "[1]"], /--input takes a JSON object/],
    ];
    for (const [args, message] of cases) {
      const r = await sandgate(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stdout, args.join(" ")).toBe("");
      expect(r.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(r.stderr, args.join(" ")).toMatch(message);
    }
  });

  it("exits 1 with the error's code when the operation refuses (a session it does not know)", async () => {
    const r = await sandgate(["sessions.get", "nope"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^sandgate: no session with id nope.*\[SESSION_NOT_FOUND\]\n$/);
  });
});

const KEY = "call-key-0123456789abcdef";
const remote = useTestServer({ pool: { python: 0, javascript: 0, bash: 0 }, server: { apiKeys: { ops: KEY } } });

describe("sandgate call --url on a running server", () => {
  const on = (args: string[], key = KEY): Promise<CliResult> => sandgate(["--url", remote.server.url, ...args], { env: { SANDGATE_API_KEY: key } });

  it("calls the operations' routes with the key: a session started, a file written, code reading it, the file listed", async () => {
    expect(json<{ session_id: string; owner: string }>(await on(["sessions.create", "--session-id", "cli-s1"]))).toMatchObject({ session_id: "cli-s1", owner: "key:ops" });
    expect(json<{ created: boolean }>(await on(["files.write", "--session-id", "cli-s1", "--path", "/workspace/a.txt", "--content", "hello"])).created).toBe(true);
    // execute.code has no declared route of its own (POST /execute is written by hand): its MCP tool answers, at /mcp/execute.
    expect(json<{ stdout: string }>(await on(["execute.code", "--session-id", "cli-s1", "--language", "bash", "cat /workspace/a.txt"])).stdout).toBe("hello");
    const listed = json<{ entries: Array<{ name: string }> }>(await on(["files.list", "--session-id", "cli-s1"]));
    expect(listed.entries.map((e) => e.name)).toEqual(["a.txt"]);
    const stopped = await on(["sessions.stop", "cli-s1"]);
    expect(stopped.code).toBe(0);
  });

  it("reads the public status without a key, and says what the server refused, exit 1", async () => {
    const health = await sandgate(["--url", remote.server.url, "status.health"]);
    expect(json<{ status: string }>(health).status).toBe("ok");
    const wrong = await on(["sessions.list"], "not-the-key-0123456789");
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe("sandgate: the API key is not valid [UNAUTHORIZED]\n");
    const missing = await on(["jobs.read", "--job-id", "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/\[JOB_NOT_FOUND\]\n$/);
  });

  it("answers as without --url: a failing run is a result (exit 0), a field only the MCP tool takes goes through it, and a path segment of dots stays a value", async () => {
    const failing = await on(["execute.code", "--language", "bash", "echo out; exit 3"]);
    expect(failing.code).toBe(0);
    expect(json<{ status: string; exit_code: number; stdout: string }>(failing)).toMatchObject({ status: "error", exit_code: 3, stdout: "out\n" });
    // sessions.list takes session_id on MCP (get_sessions) but not on REST (GET /sessions).
    expect((await on(["sessions.create", "--session-id", "cli-s2"])).code).toBe(0);
    const one = await on(["sessions.list", "--session-id", "cli-s2"]);
    expect(one.stderr).toBe("");
    expect(json<{ sessions: Array<{ session_id: string }> }>(one).sessions.map((x) => x.session_id)).toEqual(["cli-s2"]);
    expect((await on(["sessions.stop", "cli-s2"])).code).toBe(0);
    const dots = await on(["sessions.get", ".."]);
    expect(dots.code).toBe(2);
    expect(dots.stdout).toBe("");
    expect(dots.stderr).toBe("sandgate: --session-id .. cannot travel in a URL path [INVALID_INPUT]\n");
  });

  it("says so when nothing answers at the URL, or the URL is not one", async () => {
    const closed = await sandgate(["--url", "http://127.0.0.1:9", "sessions.list"]);
    expect(closed.code).toBe(1);
    expect(closed.stderr).toMatch(/^sandgate: could not reach http:\/\/127\.0\.0\.1:9: .*\[UNREACHABLE\]\n$/);
    const bad = await sandgate(["--url", "ftp://example", "sessions.list"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--url must be http or https/);
  });
});

describe("sandgate call --url on something hostile at the address", () => {
  /** An HTTP server on port 0 that answers every request with `body` as JSON's content type. */
  async function answering(body: string): Promise<{ url: string; server: Server }> {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
  }

  it("refuses an answer that is not JSON, or nested deeper than can be printed, with one line and exit 1", async () => {
    for (const [body, message] of [
      ["<html>proxy login</html>", /the server answered 200 with something that is not JSON: "<html>proxy login<\/html>" \[BAD_RESPONSE\]/],
      ["[".repeat(100_000) + "]".repeat(100_000), /the answer is nested too deeply to print \[BAD_RESPONSE\]/],
      // A JSON-RPC answer with no result, to a call through the MCP tool.
      ["null", /the server answered 200 without a tool result \[BAD_RESPONSE\]|without a tool result/],
    ] as const) {
      const { url, server } = await answering(body);
      try {
        const r = await sandgate(["--url", url, body === "null" ? "execute.code" : "sessions.list", ...(body === "null" ? ["1", "--language", "py"] : [])]);
        expect(r.code).toBe(1);
        expect(r.stdout).toBe("");
        expect(r.stderr).toMatch(message);
      } finally {
        server.close();
      }
    }
  });

  it("prints a server's error without its control characters, on one line, and its code made plain", async () => {
    const evil = JSON.stringify({ error: { code: "X\u001b[2J", message: "gone\u001b]0;pwned\u0007\nsecond line\u202e" } });
    const server = createServer((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(evil);
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    try {
      const r = await sandgate(["--url", `http://127.0.0.1:${(server.address() as AddressInfo).port}`, "sessions.list"]);
      expect(r.code).toBe(1);
      expect([...r.stderr].filter((ch) => (ch < " " && ch !== "\n") || ch === "\u007f" || ch === "\u202e")).toEqual([]);
      expect(r.stderr.split("\n")).toHaveLength(2);
      expect(r.stderr).toMatch(/^sandgate: gone .*second line \[X__2J\]\n$/);
    } finally {
      server.close();
    }
  });
});
