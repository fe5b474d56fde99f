// Environment variables given to sandboxed code, per call and per session, in real sandboxes:
// who sees them and for how long, which names are refused, and secrets masked in every result.

import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { SandgateError } from "../../src/errors/index.js";
import type { ExecuteRequest } from "../../src/execution/index.js";
import { createTestEngine, type TestEngine } from "../helpers.js";

const HOST_SECRET = "host-secret-value-8472";
const SECRET = "sk-test-Zq8xW3vN5mK2pL9rT4yU";

let fx: TestEngine;
beforeAll(() => {
  // Set before the engine (and its pool) starts: nothing of the host's environment may reach a sandbox.
  process.env.SANDGATE_TEST_HOST_SECRET = HOST_SECRET;
  fx = createTestEngine({}, { python: 1, javascript: 1, bash: 1 });
});
afterAll(async () => {
  delete process.env.SANDGATE_TEST_HOST_SECRET;
  await fx.close();
});

const run = (request: ExecuteRequest) => fx.engine.execute(request);
let sessions = 0;
const open: string[] = [];
const newSession = (env?: Record<string, string>): string => {
  const id = fx.engine.sessions.create(`env-${++sessions}`, undefined, env ? { env } : {}).id;
  open.push(id);
  return id;
};
afterEach(async () => {
  await Promise.all(open.splice(0).map((id) => fx.engine.sessions.stop(id).catch(() => undefined)));
});

async function refused(request: Promise<unknown> | (() => unknown)): Promise<SandgateError> {
  try {
    await (typeof request === "function" ? request() : request);
  } catch (error) {
    return error as SandgateError;
  }
  throw new Error("expected the request to be refused");
}

describe("per-call env", () => {
  it("is visible to Python, JavaScript and Bash code and to the processes they start", async () => {
    const env = { GREETING: "hello from env", MULTI_LINE: "a\nb c" };
    const py = await run({ language: "python", env, code: "import os, subprocess\nprint(os.environ['GREETING'])\nprint(subprocess.run(['sh', '-c', 'echo \"$MULTI_LINE\"'], capture_output=True, text=True).stdout, end='')" });
    expect(py.stdout).toBe("hello from env\na\nb c\n");
    const js = await run({ language: "javascript", env, code: "const { execFileSync } = require('child_process');\nconsole.log(process.env.GREETING);\nexecFileSync('sh', ['-c', 'echo \"$GREETING\"']).toString()" });
    expect(js.stdout).toBe("hello from env\n");
    expect(js.value).toBe("hello from env\n");
    const sh = await run({ language: "bash", env, code: 'echo "$GREETING"; bash -c \'echo "$MULTI_LINE"\'' });
    expect(sh.stdout).toBe("hello from env\na\nb c\n");
    const cmd = await fx.engine.executeCommand({ command: 'printenv GREETING', env });
    expect(cmd.stdout).toBe("hello from env\n");
  });

  it("is gone in the next call of the same session, and a variable it shadowed gets its own value back", async () => {
    const id = newSession();
    await run({ language: "python", sessionId: id, code: "import os\nos.environ['KEPT'] = 'own'" });
    expect((await run({ language: "python", sessionId: id, env: { ONCE: "1", KEPT: "call" }, code: "import os\n[os.environ.get('ONCE'), os.environ['KEPT']]" })).value).toEqual(["1", "call"]);
    expect((await run({ language: "python", sessionId: id, code: "import os\n[os.environ.get('ONCE'), os.environ['KEPT']]" })).value).toEqual([null, "own"]);

    await run({ language: "javascript", sessionId: id, code: "process.env.KEPT = 'own'" });
    expect((await run({ language: "javascript", sessionId: id, env: { ONCE: "1", KEPT: "call" }, code: "[process.env.ONCE, process.env.KEPT]" })).value).toEqual(["1", "call"]);
    expect((await run({ language: "javascript", sessionId: id, code: "[process.env.ONCE ?? null, process.env.KEPT]" })).value).toEqual([null, "own"]);

    await run({ language: "bash", sessionId: id, code: "KEPT=own; rc=7" });
    const during = await run({ language: "bash", sessionId: id, env: { ONCE: "1", KEPT: "call", rc: "x" }, code: 'echo "$ONCE $KEPT $rc"; printenv KEPT' });
    expect(during.stdout).toBe("1 call x\ncall\n");
    // Restored as it was: set but not exported, and rc (a name the runner uses for a local) intact.
    const after = await run({ language: "bash", sessionId: id, code: 'echo "[${ONCE-unset}] $KEPT $rc"; printenv KEPT || echo not-exported' });
    expect(after.stdout).toBe("[unset] own 7\nnot-exported\n");
  });

  it("reaches stateless calls, which take warm sandboxes", async () => {
    const result = await run({ language: "python", env: { STATELESS: "yes é🎉" }, code: "import os\nos.environ['STATELESS']" });
    expect(result.value).toBe("yes é🎉");
    expect((await run({ language: "python", code: "import os\nos.environ.get('STATELESS')" })).value).toBeUndefined();
  });
});

describe("per-session env", () => {
  it("is visible in every call, in every language, and again after a state reset", async () => {
    const id = newSession({ REGION: "eu-west", DEBUG_LEVEL: "2" });
    expect(fx.engine.sessions.get(id).envNames.sort()).toEqual(["DEBUG_LEVEL", "REGION"]);
    expect((await run({ language: "python", sessionId: id, code: "import os\nos.environ['REGION']" })).value).toBe("eu-west");
    expect((await run({ language: "python", sessionId: id, env: { REGION: "us" }, code: "import os\nos.environ['REGION']" })).value).toBe("us");
    expect((await run({ language: "python", sessionId: id, code: "import os\nos.environ['REGION']" })).value).toBe("eu-west");
    expect((await run({ language: "bash", sessionId: id, code: "echo $REGION-$DEBUG_LEVEL" })).stdout).toBe("eu-west-2\n");
    expect((await run({ language: "javascript", sessionId: id, code: "process.env.REGION" })).value).toBe("eu-west");

    // A timeout the runner cannot interrupt kills the sandbox: the new one gets the session's variables too.
    await run({ language: "python", sessionId: id, code: "before_reset = 1" });
    const killed = await run({ language: "python", sessionId: id, timeoutS: 1, code: "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass" });
    expect(killed.status).toBe("timeout");
    const after = await run({ language: "python", sessionId: id, code: "import os\n['before_reset' in globals(), os.environ['REGION']]" });
    expect(after.value).toEqual([false, "eu-west"]);
  });

  it("is replaced by a call's sessionEnv, which needs a session", async () => {
    const id = newSession({ OLD: "1" });
    const set = await run({ language: "python", sessionId: id, sessionEnv: { NEW: "2" }, code: "import os\n[os.environ.get('OLD'), os.environ['NEW']]" });
    expect(set.value).toEqual([null, "2"]);
    expect((await run({ language: "python", sessionId: id, code: "import os\nos.environ['NEW']" })).value).toBe("2");
    expect(fx.engine.sessions.get(id).envNames).toEqual(["NEW"]);
    // Starting a live session again with env replaces its variables too (POST /sessions does this).
    const again = fx.engine.sessions.ensure(id, undefined, { env: { AGAIN: "3" } });
    expect(again.created).toBe(false);
    expect((await run({ language: "python", sessionId: id, code: "import os\n[os.environ.get('NEW'), os.environ['AGAIN']]" })).value).toEqual([null, "3"]);
    const error = await refused(run({ language: "python", sessionEnv: { NEW: "2" }, code: "1" }));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toMatch(/session_env.*session_id/);
  });
});

describe("the host's environment", () => {
  it("never reaches sandboxed code, stateless or in a session", async () => {
    const id = newSession({ MINE: "1" });
    for (const sessionId of [undefined, id]) {
      const py = await run({ language: "python", ...(sessionId ? { sessionId } : {}), code: "import os\nsorted(os.environ)" });
      expect(py.value).not.toContain("SANDGATE_TEST_HOST_SECRET");
      const sh = await run({ language: "bash", ...(sessionId ? { sessionId } : {}), env: { X_CALL: "1" }, code: "env; cat /proc/1/environ | tr '\\0' '\\n'" });
      expect(sh.stdout).not.toContain(HOST_SECRET);
      expect(sh.stdout).toContain("X_CALL=1");
    }
  });
});

describe("names and bounds", () => {
  it("refuses names sandgate or the runners rely on, with INVALID_INPUT naming the variable", async () => {
    const id = newSession();
    for (const name of ["PATH", "HOME", "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "NODE_OPTIONS", "NODE_PATH", "SANDGATE_TOOL_FDS", "BASH_ENV", "BASH_FUNC_x", "ENV", "IFS", "__sg_code", "__proto__", "GLIBC_TUNABLES", "PIP_NO_INDEX", "npm_config_offline", "NPM_CONFIG_OFFLINE"]) {
      for (const field of ["env", "sessionEnv"] as const) {
        const error = await refused(run({ language: "python", sessionId: id, [field]: { [name]: "x" }, code: "1" }));
        expect(error.code, name).toBe("INVALID_INPUT");
        expect(error.message, name).toContain(name);
      }
      const created = await refused(() => fx.engine.sessions.create(undefined, undefined, { env: { [name]: "x" } }));
      expect(created.code).toBe("INVALID_INPUT");
    }
  });

  it("refuses PS4, PROMPT_COMMAND and the other variables a shell or interpreter runs code from, so a payload in one never runs", async () => {
    const payload = "$(touch /workspace/pwned)";
    const id = newSession();
    for (const name of ["PS4", "PS0", "PS1", "PS2", "PS3", "PROMPT_COMMAND", "BASH_ENV", "ENV", "PYTHONWARNINGS", "PYTHONBREAKPOINT", "PERL5OPT", "RUBYOPT", "NODE_REPL_EXTERNAL_MODULE"]) {
      for (const field of ["env", "sessionEnv"] as const) {
        const error = await refused(run({ language: "bash", sessionId: id, [field]: { [name]: payload }, code: "set -x; true" }));
        expect(error.code, name).toBe("INVALID_INPUT");
        expect(error.message, name).toContain(name);
      }
      expect((await refused(() => fx.engine.sessions.create(undefined, undefined, { env: { [name]: payload } }))).code).toBe("INVALID_INPUT");
    }
    // Nothing stayed armed in the session: later traced commands run no payload.
    const later = await run({ language: "bash", sessionId: id, code: "set -x; true; ls -A /workspace; echo done" });
    expect(later.stdout).toBe("done\n");
    const stateless = await run({ language: "bash", code: "set -x; true; echo done" });
    expect(stateless.stdout).toBe("done\n");
  });

  it("refuses bad names, NUL bytes, non-strings and too many or too large variables, never echoing a value", async () => {
    const cases: Array<Record<string, unknown>> = [
      { "1ABC": "v" },
      { "A-B": "v" },
      { "": "v" },
      { [`A${"x".repeat(128)}`]: "v" },
      { "TOKEN=value-in-name": "v" },
      { GOOD: "a\u0000b" },
      { GOOD: "a\ud800b" },
      { GOOD: 5 },
      Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`V${i}`, "1"])),
      { BIG: "x".repeat(64 * 1024) },
    ];
    for (const env of cases) {
      const error = await refused(run({ language: "bash", env: env as Record<string, string>, code: "true" }));
      expect(error.code, JSON.stringify(env).slice(0, 80)).toBe("INVALID_INPUT");
      expect(error.message).not.toContain("value-in-name");
    }
    // A session's and a call's variables together are bounded too.
    const id = newSession({ BIG1: "x".repeat(40 * 1024) });
    expect((await refused(run({ language: "bash", sessionId: id, env: { BIG2: "y".repeat(40 * 1024) }, code: "true" }))).code).toBe("INVALID_INPUT");
  });
});

describe("secret values", () => {
  it("are masked in stdout, stderr, value, error and traceback, named by their variable", async () => {
    const env = { OPENAI_API_KEY: SECRET, PLAIN: "not-secret-at-all" };
    const py = await run({
      language: "python",
      env,
      code: "import os, sys\nk = os.environ['OPENAI_API_KEY']\nprint('key', k, os.environ['PLAIN'])\nprint(k, file=sys.stderr)\nraise ValueError('bad key ' + k)",
    });
    const all = JSON.stringify(py);
    expect(all).not.toContain(SECRET);
    expect(py.stdout).toBe("key [masked:OPENAI_API_KEY] not-secret-at-all\n");
    expect(py.stderr).toContain("[masked:OPENAI_API_KEY]");
    expect(py.error?.message).toBe("bad key [masked:OPENAI_API_KEY]");
    expect(py.error?.traceback).toContain("[masked:OPENAI_API_KEY]");
    const value = await run({ language: "python", env, code: "import os\n{'k': os.environ['OPENAI_API_KEY'], os.environ['OPENAI_API_KEY']: [1]}" });
    expect(value.value).toEqual({ k: "[masked:OPENAI_API_KEY]", "[masked:OPENAI_API_KEY]": [1] });
    const js = await run({ language: "javascript", env: { GITHUB_TOKEN: SECRET }, code: "console.error(process.env.GITHUB_TOKEN); throw new Error(process.env.GITHUB_TOKEN)" });
    expect(JSON.stringify(js)).not.toContain(SECRET);
    expect(js.stderr).toContain("[masked:GITHUB_TOKEN]");
    const sh = await run({ language: "bash", env: { DB_PASSWORD: SECRET }, code: 'echo "$DB_PASSWORD"; echo "$DB_PASSWORD" >&2' });
    expect(sh.stdout).toBe("[masked:DB_PASSWORD]\n");
    expect(sh.stderr).toBe("[masked:DB_PASSWORD]\n");
  });

  it("are masked in the saved full output of a long output", async () => {
    const result = await run({ language: "python", env: { API_TOKEN: SECRET }, code: "import os\nfor i in range(4000):\n    print(i, os.environ['API_TOKEN'])" });
    expect(result.truncated).toBe(true);
    expect(JSON.stringify(result)).not.toContain(SECRET);
    const uri = result.fullOutput?.stdout;
    expect(uri).toBeDefined();
    const id = /outputs\/([^/]+)\//.exec(uri!)![1]!;
    const full = (await fx.engine.readSavedOutput(id, "stdout")).toString("utf8");
    expect(full.length).toBeGreaterThan(64 * 1024);
    expect(full).not.toContain(SECRET);
    expect(full.split("\n")[3999]).toBe("3999 [masked:API_TOKEN]");
  });

  it("are masked in streamed output even when split across chunks", async () => {
    const chunks: string[] = [];
    const result = await run({
      language: "javascript",
      env: { SESSION_COOKIE: SECRET },
      onOutput: (stream, text) => {
        if (stream === "stdout") chunks.push(text);
      },
      code: "const s = process.env.SESSION_COOKIE;\nprocess.stdout.write('a' + s.slice(0, 9));\nawait new Promise((r) => setTimeout(r, 100));\nprocess.stdout.write(s.slice(9) + 'b\\n');\nprocess.stdout.write(s.slice(0, 5) + '!\\n');",
    });
    expect(chunks.join("")).toBe(`a[masked:SESSION_COOKIE]b\n${SECRET.slice(0, 5)}!\n`);
    expect(chunks.join("")).not.toContain(SECRET);
    expect(result.stdout).toBe(chunks.join(""));
  });

  it("given to a session earlier stay masked in its later calls, and a URL's password is masked", async () => {
    const id = newSession({ DATABASE_URL: "postgres://app:hunter2-pass@db.internal/app" });
    await run({ language: "python", sessionId: id, env: { STRIPE_SECRET: SECRET }, code: "import os\nkept = os.environ['STRIPE_SECRET']" });
    const later = await run({ language: "python", sessionId: id, code: "import os\nprint(kept)\nprint(os.environ['DATABASE_URL'])" });
    expect(later.stdout).toBe("[masked:STRIPE_SECRET]\npostgres://app:[masked:DATABASE_URL]@db.internal/app\n");
  });
});
