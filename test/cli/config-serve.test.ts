// The config file and the commands around it: sandgate.json merged under the environment,
// errors naming key and file, `config --print` with secrets masked, admin volumes inside the
// sandbox, and `sandgate serve` started, refused and stopped as a user would.

import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { startHttpServer } from "../../src/server/index.js";
import { appContext } from "../server-helpers.js";
import { createTestApp, descendantPids, waitFor } from "../helpers.js";
import { runCli, startServe, type CliResult } from "../fixtures/cli.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-config-"));
// Sandboxes run as an unprivileged host user when tests run as root; it must reach the state dirs.
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeConfig(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
}

function sandgate(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { env: { SANDBOX_DIR: join(dir, "state"), ...env }, cwd: dir });
}

describe("sandgate.json", () => {
  it("merges the file over the defaults and the environment over the file", () => {
    const path = writeConfig("merge.json", {
      $schema: "./sandgate.schema.json",
      limits: { maxExecutionTimeS: 12 },
      server: { port: 9000, cors: { enabled: true, origins: ["http://app.example"] } },
      sessions: { max: 3 },
    });
    const config = loadConfig({ SANDBOX_DIR: "/tmp/x", SANDGATE_PORT: "9100" }, { configPath: path });
    expect(config.limits.maxExecutionTimeS).toBe(12);
    expect(config.limits.maxMemoryMb).toBe(loadConfig({ SANDBOX_DIR: "/tmp/x" }).limits.maxMemoryMb); // untouched default
    expect(config.server.port).toBe(9100); // the environment wins
    expect(config.server.cors).toEqual({ enabled: true, origins: ["http://app.example"] });
    expect(config.sessions).toMatchObject({ max: 3, idleTtlS: 900, maxPerIdentity: 8 });
    expect(loadConfig({ SANDGATE_CONFIG: path }).limits.maxExecutionTimeS).toBe(12);
  });

  it("names the file and the key in every error", () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ["typo.json", { limits: { maxExecutionTimeS: 5, maxMemroyMb: 64 } }, /typo\.json\): limits\.maxMemroyMb: unknown key/],
      ["type.json", { server: { port: "eighty" } }, /type\.json\): server\.port: Expected number/],
      ["range.json", { server: { port: 70000 } }, /range\.json\): server\.port/],
      ["key.json", { server: { apiKey: "short" } }, /key\.json\): server\.apiKey: use at least 16 characters/],
      ["volume.json", { volumes: [{ name: "Data Set", hostPath: "/srv" }] }, /volume\.json\): volumes\.0\.name/],
      ["broken.json", "{ \"limits\": ", /broken\.json is not valid JSON/],
      ["array.json", [1, 2], /array\.json must hold a JSON object/],
    ];
    for (const [name, value, message] of cases) {
      expect(() => loadConfig({}, { configPath: writeConfig(name, value) }), name).toThrow(message);
    }
    expect(() => loadConfig({}, { configPath: join(dir, "missing.json") })).toThrow(/cannot read config file .*missing\.json: no such file/);
    expect(() => loadConfig({ SANDGATE_PORT: "x" })).toThrow(/SANDGATE_PORT/);
    expect(() => loadConfig({ MCP_ENABLE_CORS: "maybe" })).toThrow(/MCP_ENABLE_CORS/);
  });

  it("config --print shows the effective config with the API key masked; --schema describes every key", async () => {
    const path = writeConfig("print.json", { server: { apiKey: "super-secret-key-123456" }, limits: { maxExecutionTimeS: 7 } });
    const printed = await sandgate(["config", "--print", "--config", path]);
    expect(printed.code).toBe(0);
    expect(printed.stdout).not.toContain("super-secret");
    const shown = JSON.parse(printed.stdout) as { server: { apiKey: string }; limits: { maxExecutionTimeS: number } };
    expect(shown.server.apiKey).toBe("********");
    expect(shown.limits.maxExecutionTimeS).toBe(7);
    const fromEnv = await sandgate(["config", "--print"], { SANDGATE_API_KEY: "env-secret-key-abcdefgh" });
    expect(fromEnv.stdout).not.toContain("env-secret");

    const schema = JSON.parse((await sandgate(["config", "--schema"])).stdout) as { properties: Record<string, { description?: string; properties?: Record<string, { description?: string }> }> };
    for (const [key, prop] of Object.entries(schema.properties)) {
      expect(prop.description, key).toBeTruthy();
      for (const [inner, innerProp] of Object.entries(prop.properties ?? {})) expect(innerProp.description, `${key}.${inner}`).toBeTruthy();
    }
    const bad = await sandgate(["config", "--print", "--config", writeConfig("bad.json", { nope: 1 })]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.json\): nope: unknown key/);
  });

  it("picks up ./sandgate.json from the working directory", async () => {
    writeConfig("sandgate.json", { limits: { maxExecutionTimeS: 9 } });
    try {
      const printed = await sandgate(["config", "--print"]);
      expect((JSON.parse(printed.stdout) as { limits: { maxExecutionTimeS: number } }).limits.maxExecutionTimeS).toBe(9);
    } finally {
      rmSync(join(dir, "sandgate.json"));
    }
  });
});

describe("volumes", () => {
  it("mounts admin volumes into sandboxes, read-only unless marked writable, and lists them", async () => {
    const data = join(dir, "vol-data");
    const scratch = join(dir, "vol-scratch");
    mkdirSync(data, { mode: 0o755 });
    mkdirSync(scratch);
    chmodSync(scratch, 0o777); // writable volumes must be writable by the sandbox user
    writeFileSync(join(data, "facts.txt"), "the answer is 42\n", { mode: 0o644 });
    const config = {
      ...loadConfig({ SANDBOX_DIR: join(dir, "vol-state"), MAX_EXECUTION_TIME: "20" }),
      volumes: [
        { name: "data", hostPath: data, readOnly: true, description: "reference facts" },
        { name: "scratch", hostPath: scratch, readOnly: false },
      ],
    };
    const app = createTestApp(config, { pool: { python: 0, javascript: 0, bash: 0 } });
    const server = await startHttpServer(appContext(app));
    try {
      const run = async (command: string): Promise<{ status: string; stdout: string; stderr: string }> => {
        const response = await fetch(`${server.url}/execute`, { method: "POST", body: JSON.stringify({ code: command, language: "bash" }) });
        return (await response.json()) as { status: string; stdout: string; stderr: string };
      };
      expect((await run("cat /mnt/data/facts.txt")).stdout).toBe("the answer is 42\n");
      const denied = await run("echo x > /mnt/data/new.txt");
      expect(denied.status).toBe("error");
      expect(denied.stderr).toMatch(/Read-only file system/);
      expect((await run("echo kept > /mnt/scratch/out.txt && cat /mnt/scratch/out.txt")).stdout).toBe("kept\n");
      const listed = (await (await fetch(`${server.url}/volumes`)).json()) as { volumes: unknown[] };
      expect(listed.volumes).toEqual([
        { name: "data", path: "/mnt/data", read_only: true, description: "reference facts" },
        { name: "scratch", path: "/mnt/scratch", read_only: false },
      ]);
      expect(JSON.stringify(listed)).not.toContain(dir); // host paths stay on the host
    } finally {
      await server.close();
      await app.close();
    }
  });
});

describe("sandgate serve", () => {
  it("serves until SIGTERM, then exits 0 and leaves nothing running", async () => {
    const { url, stop } = await startServe({ SANDBOX_DIR: join(dir, "serve-state"), SANDGATE_POOL: "python=1,javascript=0,bash=0" });
    const health = (await (await fetch(`${url}/health`)).json()) as { status: string };
    expect(health.status).toBe("ok");
    const result = (await (await fetch(`${url}/execute`, { method: "POST", body: JSON.stringify({ code: "print('served')", language: "python" }) })).json()) as { stdout: string };
    expect(result.stdout).toBe("served\n");
    expect(await stop()).toBe(0);
    expect(await waitFor(() => descendantPids().length === 0, 10_000)).toBe(true);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });

  it("refuses to listen beyond loopback without an API key", async () => {
    const refused = await sandgate(["serve", "--host", "0.0.0.0", "--port", "0"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/refusing to listen on 0\.0\.0\.0 without an API key/);
    const badPort = await sandgate(["serve", "--port", "http"]);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toMatch(/--port http is not a port number/);
  });
});
