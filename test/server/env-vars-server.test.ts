// Environment variables through the real server on port 0: REST sessions with env, REST and MCP
// calls with env and session_env, secrets masked in what comes back, and a log that never holds a value.

import { Writable } from "node:stream";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, type SandgateConfig } from "../../src/config/index.js";
import type { App } from "../../src/app/index.js";
import { startHttpServer, type RunningServer } from "../../src/server/index.js";
import { callTool, connectMcp } from "../fixtures/mcp-client.js";
import { createTestApp } from "../helpers.js";
import { appContext, expectError, jsonApi, type Api } from "../server-helpers.js";

const SECRET = "ghp_Zq8xW3vN5mK2pL9rT4yUa1b2c3d4e5f6";
const PLAIN_VALUE = "plain-value-7731";

let dir: string;
let app: App;
let config: SandgateConfig;
let server: RunningServer;
let api: Api;
/** Every line the engine and the server logged, at debug level. */
const logLines: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-env-server-"));
  config = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" });
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString("utf8"));
      done();
    },
  });
  const log = pino({ level: "debug" }, sink);
  app = createTestApp(config, { log, pool: { python: 1, javascript: 0, bash: 1 } });
  server = await startHttpServer(appContext(app));
  api = jsonApi(() => server.url);
});
afterAll(async () => {
  await server.close();
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

interface WireSession {
  session_id: string;
  env_names: string[];
}
interface WireResult {
  status: string;
  stdout: string;
  stderr: string;
  value?: unknown;
  error?: { message: string; traceback: string };
}

describe("environment variables over REST", () => {
  it("POST /sessions sets a session's variables; the session shows their names, never their values", async () => {
    const created = await api<WireSession>("/sessions", { json: { session_id: "rest-env", env: { GITHUB_TOKEN: SECRET, REGION: PLAIN_VALUE } } });
    expect(created.status).toBe(201);
    expect(created.body.env_names.sort()).toEqual(["GITHUB_TOKEN", "REGION"]);
    expect(JSON.stringify(created.body)).not.toContain(SECRET);
    const listed = await api<{ sessions: WireSession[] }>("/sessions");
    expect(JSON.stringify(listed.body)).not.toContain(SECRET);

    const ran = await api<WireResult>("/execute", {
      json: { language: "python", session_id: "rest-env", env: { CALL_ONLY: "yes" }, code: "import os\nprint(os.environ['GITHUB_TOKEN'], os.environ['REGION'], os.environ['CALL_ONLY'])\nos.environ['GITHUB_TOKEN']" },
    });
    expect(ran.status).toBe(200);
    expect(ran.body.stdout).toBe(`[masked:GITHUB_TOKEN] ${PLAIN_VALUE} yes\n`);
    expect(ran.body.value).toBe("[masked:GITHUB_TOKEN]");

    // Streamed over server-sent events, the secret is masked in every event.
    const streamed = await api<string>("/execute?stream=1", { json: { language: "bash", session_id: "rest-env", code: 'echo "$GITHUB_TOKEN"' } });
    expect(streamed.status).toBe(200);
    expect(streamed.body).toContain("[masked:GITHUB_TOKEN]");
    expect(streamed.body).not.toContain(SECRET);
    await api(`/sessions/rest-env`, { method: "DELETE" });
  });

  it("refuses a reserved name, a bad one, and session_env without a session, with INVALID_INPUT (also before a stream)", async () => {
    expect(expectError(await api("/sessions", { json: { env: { LD_PRELOAD: "/x.so" } } }), 400, "INVALID_INPUT").message).toContain("LD_PRELOAD");
    expect(expectError(await api("/execute", { json: { language: "python", code: "1", env: { PATH: "/x" } } }), 400, "INVALID_INPUT").message).toContain("PATH");
    expect(expectError(await api("/execute?stream=1", { json: { language: "python", code: "1", env: { NODE_OPTIONS: "--require=/x" } } }), 400, "INVALID_INPUT").message).toContain(
      "NODE_OPTIONS",
    );
    const bad = expectError(await api("/execute", { json: { language: "python", code: "1", env: { [`TOKEN=${SECRET}`]: "x" } } }), 400, "INVALID_INPUT");
    expect(bad.message).not.toContain(SECRET);
    for (const [path, extra] of [["/execute", {}], ["/execute?stream=1", {}], ["/execute", { background: true }]] as const) {
      expect(expectError(await api(path, { json: { language: "python", code: "1", session_env: { A: "1" }, ...extra } }), 400, "INVALID_INPUT").message, path).toContain("needs a session_id");
    }
  });

  it("refuses PS4 and PROMPT_COMMAND in env and session_env, and the payload in them never runs, then or in later calls", async () => {
    const payload = "$(touch /workspace/pwned)";
    for (const name of ["PS4", "PROMPT_COMMAND"]) {
      const call = expectError(await api("/execute", { json: { language: "bash", code: "set -x; true", session_id: "ps4", env: { [name]: payload } } }), 400, "INVALID_INPUT");
      expect(call.message).toContain(name);
      const armed = expectError(await api("/execute", { json: { language: "bash", code: "set -x; true", session_id: "ps4", session_env: { [name]: payload } } }), 400, "INVALID_INPUT");
      expect(armed.message).toContain(name);
      expect(expectError(await api("/sessions", { json: { session_id: `ps4-${name}`, env: { [name]: payload } } }), 400, "INVALID_INPUT").message).toContain(name);
    }
    const later = await api<{ stdout: string }>("/execute", { json: { language: "bash", code: "set -x; true; ls -A /workspace; echo done", session_id: "ps4" } });
    expect(later.body.stdout).toBe("done\n");
  });

  it("the security policy says which names are refused and what is masked", async () => {
    const policy = await api<{ env: { max_vars: number; max_bytes: number; reserved: string[]; masked: string } }>("/security/policy");
    expect(policy.body.env).toMatchObject({ max_vars: 64, max_bytes: 65536 });
    expect(policy.body.env.reserved).toEqual(expect.arrayContaining(["PATH", "LD_*", "SANDGATE_*", "PYTHONPATH", "NODE_OPTIONS", "PS4", "PROMPT_COMMAND"]));
    expect(policy.body.env.masked).toContain("[masked:NAME]");
  });
});

describe("environment variables over MCP", () => {
  it("session_env sets the session's variables from that call on, env only for its call, and secrets come back masked", async () => {
    const { client } = await connectMcp(server.url);
    try {
      const first = await callTool(client, "execute_code", {
        language: "python",
        session_id: "mcp-env",
        session_env: { STRIPE_API_KEY: SECRET },
        env: { ONCE: PLAIN_VALUE },
        code: "import os\nprint(os.environ['STRIPE_API_KEY'])\nos.environ['ONCE']",
      });
      expect(first.structuredContent).toMatchObject({ status: "ok", stdout: "[masked:STRIPE_API_KEY]\n", value: PLAIN_VALUE });
      expect(JSON.stringify(first.content)).not.toContain(SECRET);
      const later = await callTool(client, "execute_command", { session_id: "mcp-env", command: 'echo "${ONCE-gone}"; printenv STRIPE_API_KEY >&2' });
      expect(later.structuredContent).toMatchObject({ status: "ok", stdout: "gone\n", stderr: "[masked:STRIPE_API_KEY]\n" });
      const sessions = await callTool(client, "get_sessions", { session_id: "mcp-env" });
      expect(JSON.stringify(sessions.structuredContent)).toContain("STRIPE_API_KEY");
      expect(JSON.stringify(sessions)).not.toContain(SECRET);
      const refused = await client.callTool({ name: "execute_code", arguments: { language: "python", code: "1", env: { SANDGATE_X: "1" } } }).then(
        (result) => JSON.stringify(result),
        (error: Error) => error.message,
      );
      expect(refused).toMatch(/SANDGATE_X/);
      await callTool(client, "stop_session", { session_id: "mcp-env" });
    } finally {
      await client.close();
    }
  });
});

describe("the server's log", () => {
  it("holds no value of any variable given to code, only what it logs anyway", () => {
    const log = logLines.join("");
    // The MCP calls above were logged: the capture works.
    expect(log).toContain("execute_code");
    expect(log).not.toContain(SECRET);
    expect(log).not.toContain(PLAIN_VALUE);
    expect(log).not.toContain("/x.so");
    expect(log).not.toContain("--require=/x");
  });
});
