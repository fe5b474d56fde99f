// Settings declared once: every declared environment variable really changes the effective
// configuration, the README names only declared variables and carries the generated table, the
// JSON Schema describes every key, and a malformed or out-of-range value names its variable.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  CONFIG_FILE_VARIABLE,
  configJsonSchema,
  declaredSettings,
  defaultConfig,
  envSettings,
  loadConfig,
  settingsTable,
  validateConfig,
} from "../../src/config/index.js";
import { ERROR_CODES } from "../../src/errors/index.js";
import { runCli } from "../fixtures/cli.js";

const ROOT = join(import.meta.dirname, "..", "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

// An empty working directory, so no ./sandgate.json lying around changes what loadConfig sees.
const cwd = mkdtempSync(join(tmpdir(), "sandgate-settings-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const load = (env: Record<string, string>) => loadConfig(env, { cwd });

function valueAt(config: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((node, name) => (node as Record<string, unknown> | undefined)?.[name], config);
}

/** Variables that only make sense with another one set (CORS needs its origins). */
const COMPANIONS: Record<string, Record<string, string>> = {
  MCP_ENABLE_CORS: { SANDGATE_CORS_ORIGINS: "https://app.example" },
};

describe("settings declared once", () => {
  it("every declared environment variable, set to another valid value, changes the effective setting", () => {
    const settings = envSettings();
    expect(settings.length).toBeGreaterThan(40);
    for (const setting of settings) {
      const companions = COMPANIONS[setting.env] ?? {};
      const before = valueAt(load(companions), setting.path);
      const text = setting.codec.example(before);
      const after = valueAt(load({ ...companions, [setting.env]: text }), setting.path);
      expect(after, `${setting.env}=${text}`).not.toEqual(before);
      expect(after, `${setting.env}=${text}`).toEqual(setting.codec.parse(text, before, setting.env));
    }
  });

  it("SANDGATE_CONFIG names the config file that is read", () => {
    const path = join(cwd, "elsewhere.json");
    writeFileSync(path, JSON.stringify({ limits: { maxExecutionTimeS: 7 } }));
    expect(load({}).limits.maxExecutionTimeS).toBe(300);
    expect(load({ [CONFIG_FILE_VARIABLE.env]: path }).limits.maxExecutionTimeS).toBe(7);
  });

  it("a blank variable leaves the setting at its default", () => {
    const defaults = load({});
    for (const setting of envSettings()) {
      expect(valueAt(load({ [setting.env]: "  " }), setting.path), setting.env).toEqual(valueAt(defaults, setting.path));
    }
  });

  it("the defaults are a valid configuration", () => {
    const defaults = defaultConfig();
    expect(validateConfig(defaults, "defaults")).toEqual(defaults);
  });

  it("every environment variable the README mentions is declared, and the README's table is the generated one", () => {
    const declared = new Set([...envSettings().map((s) => s.env), CONFIG_FILE_VARIABLE.env]);
    const errorCodes = new Set(Object.keys(ERROR_CODES));
    const mentioned = new Set([...README.matchAll(/\b(?:SANDGATE|SANDBOX|MCP|MAX)_[A-Z0-9_]+\b/g)].map((m) => m[0]).filter((name) => !errorCodes.has(name)));
    expect([...mentioned].filter((name) => !declared.has(name)), "mentioned in README.md but not declared").toEqual([]);

    const start = README.indexOf("<!-- settings-table:");
    const end = README.indexOf("<!-- /settings-table -->");
    expect(start, "README.md has the settings table markers").toBeGreaterThan(-1);
    const table = README.slice(README.indexOf("\n", start), end).trim().split("\n");
    expect(table, "README.md's settings table is stale: run `npm run build && node scripts/settings-table.mjs`").toEqual(settingsTable());
    for (const name of declared) expect(table.join("\n"), name).toContain(`\`${name}\``);
  });

  it("the JSON Schema gives every declared key its declared description and written-down default", () => {
    const schema = configJsonSchema();
    for (const setting of declaredSettings()) {
      let node: Record<string, unknown> | undefined = schema;
      for (const name of setting.path) node = (node?.properties as Record<string, Record<string, unknown>> | undefined)?.[name];
      expect(node, setting.key).toBeDefined();
      expect(node?.description, setting.key).toBe(setting.description);
      if (setting.env !== undefined) expect(setting.description, setting.key).toContain(setting.env);
      if (setting.default !== undefined && typeof setting.default !== "function") expect(node?.default, setting.key).toEqual(setting.default);
    }
  });

  it("sandgate config --schema prints that JSON Schema", async () => {
    const printed = await runCli(["config", "--schema"], { cwd });
    expect(printed.code, printed.stderr).toBe(0);
    expect(JSON.parse(printed.stdout)).toEqual(configJsonSchema());
  });

  it("a malformed or out-of-range value fails with CONFIG_INVALID naming the variable", () => {
    const BAD: Record<string, string[]> = { number: ["lots", "-5"], integer: ["lots", "1.5", "-5"], boolean: ["maybe"], enum: ["nonsense"], string: [], list: [], custom: [] };
    const cases: Array<[string, string]> = [
      ...envSettings().flatMap((s) => (BAD[s.codec.kind] ?? []).map((text): [string, string] => [s.env, text])),
      ["SANDGATE_API_KEY", "too-short"],
      ["SANDGATE_API_KEYS", "no-colon-here"],
      ["SANDGATE_API_KEYS", "alice:aaaaaaaaaaaaaaaaaaaa,alice:bbbbbbbbbbbbbbbbbbbb"],
      ["SANDGATE_API_KEYS", "alice:short"],
      ["SANDGATE_POOL", "ruby=2"],
      ["SANDGATE_POOL", "python=two"],
      ["SANDGATE_POOL", "python=65"],
      ["SANDGATE_CORS_ORIGINS", "not a url"],
      ["SANDGATE_ALLOWED_ORIGINS", "not a url"],
    ];
    expect(cases.length).toBeGreaterThan(60);
    for (const [variable, text] of cases) {
      const attempt = () => load({ ...(COMPANIONS[variable] ?? {}), [variable]: text });
      expect(attempt, `${variable}=${text}`).toThrow(expect.objectContaining({ code: "CONFIG_INVALID", data: expect.objectContaining({ variable }) }) as Error);
      expect(attempt, `${variable}=${text}`).toThrow(variable);
    }
    // The key is named too when the value parsed but is out of range, and an API key's value never appears.
    expect(() => load({ MAX_MEMORY_MB: "4" })).toThrow(/limits\.maxMemoryMb: .*\(environment variable MAX_MEMORY_MB\)/);
    const message = (() => {
      try {
        load({ SANDGATE_API_KEYS: "alice:short-secret" });
        return "no error";
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).toMatch(/SANDGATE_API_KEYS/);
    expect(message).not.toContain("short-secret");
  });
});
