// The language registry as users meet it: aliases in any case through the engine, MCP, REST and
// the CLI; every spec's doctor probe and warm-up in real sandboxes; the tables keyed by it complete.

import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import {
  LANGUAGE_NAMES_AND_ALIASES,
  LANGUAGE_SPECS,
  LANGUAGES,
  languageForFile,
  resolveLanguage,
  RUNNER_KINDS,
  RUNNER_SPECS,
} from "../../src/languages/index.js";
import { runCli } from "../fixtures/cli.js";
import { callTool, connectMcp } from "../fixtures/mcp-client.js";
import { useTestEngine, waitFor } from "../helpers.js";
import { expectError, withServer } from "../server-helpers.js";

const fx = useTestEngine({}, { python: 1, javascript: 1, bash: 1 });

/** Code whose value says which interpreter ran it, per language. */
const WHO_RUNS: Array<[string, string, unknown]> = [
  ["PY", "import sys\nsys.implementation.name", "cpython"],
  ["Python3", "import sys\nsys.version_info.major", 3],
  ["JS", "typeof process.versions.node", "string"],
  ["Node", "typeof process.versions.node", "string"],
  ["TS", "const n: number = 41; n + 1", 42],
];

describe("the registry's tables", () => {
  it("has a spec for every language and runner, keyed by its own name, with runner files that exist", () => {
    for (const language of LANGUAGES) {
      expect(LANGUAGE_SPECS[language].name).toBe(language);
      expect(RUNNER_KINDS).toContain(LANGUAGE_SPECS[language].runner);
    }
    for (const kind of RUNNER_KINDS) {
      expect(RUNNER_SPECS[kind].kind).toBe(kind);
      for (const file of RUNNER_SPECS[kind].files) expect(existsSync(join(import.meta.dirname, "..", "..", "runners", file)), file).toBe(true);
    }
  });

  it("resolves names and aliases case-insensitively and nothing else", () => {
    for (const [name, language] of [
      ["python", "python"],
      ["PY", "python"],
      ["python3", "python"],
      ["JavaScript", "javascript"],
      ["js", "javascript"],
      ["node", "javascript"],
      ["TS", "typescript"],
      ["typescript", "typescript"],
      ["Bash", "bash"],
      ["sh", "bash"],
      ["SHELL", "bash"],
    ] as const) {
      expect(resolveLanguage(name), name).toBe(language);
    }
    for (const name of ["cobol", "", " py", "pyt", "toString", "__proto__"]) expect(resolveLanguage(name), name).toBeUndefined();
  });

  it("finds a file's language by its extension, in any case", () => {
    expect(languageForFile("/tmp/a.py")).toBe("python");
    expect(languageForFile("x.mjs")).toBe("javascript");
    expect(languageForFile("x.CJS")).toBe("javascript");
    expect(languageForFile("dir.d/x.ts")).toBe("typescript");
    expect(languageForFile("RUN.SH")).toBe("bash");
    expect(languageForFile("Makefile")).toBeUndefined();
    expect(languageForFile("x.rb")).toBeUndefined();
  });
});

describe("aliases through the engine", () => {
  it.each(WHO_RUNS)("language %j runs in the interpreter it names", async (language, code, expected) => {
    const result = await fx.engine.execute({ language, code });
    expect(result.status, result.stderr).toBe("ok");
    expect(result.value).toEqual(expected);
  });

  it("language \"Shell\" runs Bash", async () => {
    const result = await fx.engine.execute({ language: "Shell", code: 'echo "${BASH_VERSINFO[0]}" >/dev/null && echo bash' });
    expect(result).toMatchObject({ status: "ok", stdout: "bash\n" });
  });

  it("an alias keeps the session's state: py and Python are the same runner", async () => {
    const sessionId = "alias-session";
    fx.engine.sessions.create(sessionId);
    try {
      expect((await fx.engine.execute({ language: "py", code: "x = 41", sessionId })).status).toBe("ok");
      expect((await fx.engine.execute({ language: "Python", code: "x + 1", sessionId })).value).toBe(42);
    } finally {
      await fx.engine.sessions.stop(sessionId);
    }
  });

  it("an unknown language is UNKNOWN_LANGUAGE naming every name and alias", async () => {
    const error = await fx.engine.execute({ language: "cobol", code: "x" }).then(
      () => undefined,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(error?.code).toBe("UNKNOWN_LANGUAGE");
    for (const name of LANGUAGE_NAMES_AND_ALIASES) expect(error?.message).toContain(name);
  });
});

describe("every spec in a real sandbox", () => {
  it.each([...LANGUAGES])("the %s doctor probe passes", async (language) => {
    const { code, expect: expected, from } = LANGUAGE_SPECS[language].doctorProbe;
    const result = await fx.engine.execute({ language, code });
    expect(result.status, result.stderr).toBe("ok");
    expect(from === "stdout" ? result.stdout : result.value).toEqual(expected);
  });

  it("every runner's warm-up call succeeds in the warm pool", async () => {
    const warmed = await waitFor(() => RUNNER_KINDS.every((kind) => fx.engine.poolState()[kind].started > 0), 30_000);
    expect(warmed).toBe(true);
    for (const kind of RUNNER_KINDS) expect(fx.engine.poolState()[kind], kind).toMatchObject({ failures: 0 });
  });
});

describe("aliases over MCP and REST", () => {
  it("tools/list shows execute_code's language as an enum of every name and alias, and an alias in any case runs", async () => {
    await withServer(fx, {}, async (server) => {
      let client: Client | undefined;
      try {
        ({ client } = await connectMcp(server.url));
        const { tools } = await client.listTools();
        const executeCode = tools.find((t) => t.name === "execute_code");
        const properties: Record<string, { enum?: string[] }> = executeCode?.inputSchema.properties ?? {};
        const language = properties.language;
        expect(language?.enum).toEqual([...LANGUAGE_NAMES_AND_ALIASES]);
        expect(language?.enum).toEqual(expect.arrayContaining(["py", "js", "ts", "sh"]));

        const ran = await callTool(client, "execute_code", { language: "Py", code: "6 * 7" });
        expect(ran.isError ?? false).toBe(false);
        expect(ran.structuredContent).toMatchObject({ status: "ok", value: 42 });

        const refused = await callTool(client, "execute_code", { language: "COBOL", code: "x" }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(refused).toBeInstanceOf(McpError);
        expect((refused as McpError).code).toBe(-32602);
        expect((refused as McpError).message).toMatch(/unknown language "COBOL".*python \(py, python3\)/);
      } finally {
        await client?.close();
      }
    });
  });

  it("REST /languages lists every registry entry with its aliases and extensions; /execute takes an alias", async () => {
    await withServer(fx, {}, async (_server, api) => {
      const { status, body } = await api<{ languages: Array<{ name: string; aliases: string[]; file_extensions: string[]; version: string | null }> }>(
        "/languages",
      );
      expect(status).toBe(200);
      expect(body.languages.map((l) => l.name)).toEqual([...LANGUAGES]);
      for (const entry of body.languages) {
        const spec = LANGUAGE_SPECS[entry.name as (typeof LANGUAGES)[number]];
        expect(entry.aliases).toEqual([...spec.aliases]);
        expect(entry.file_extensions).toEqual([...spec.extensions]);
        expect(entry.version, entry.name).toMatch(/\d+\.\d+/);
      }
      const ran = await api<{ status: string; stdout: string }>("/execute", { json: { language: "SH", code: "echo $((6 * 7))" } });
      expect(ran.status).toBe(200);
      expect(ran.body).toMatchObject({ status: "ok", stdout: "42\n" });
      expectError(await api("/execute", { json: { language: "cobol", code: "x" } }), 400, "UNKNOWN_LANGUAGE");
    });
  });
});

describe("the CLI (built: npm run build)", () => {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-lang-cli-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const sandgate = (args: string[]) => runCli(args, { env: { SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" } });

  it("takes the language from a .mjs or .SH file's extension", async () => {
    const mjs = join(dir, "prog.mjs");
    writeFileSync(mjs, "const { argv } = process;\nconsole.log(typeof argv, [1, 2, 3].length);\n");
    expect(await sandgate(["exec", "-f", mjs])).toMatchObject({ code: 0, stdout: "object 3\n" });
    const sh = join(dir, "PROG.SH");
    writeFileSync(sh, 'echo "shell $((1 + 2))"\n');
    expect(await sandgate(["exec", "-f", sh])).toMatchObject({ code: 0, stdout: "shell 3\n" });
  });

  it("accepts an alias for --language and names the aliases for an unknown extension", async () => {
    expect(await sandgate(["exec", "-l", "PY", "print(6 * 7)"])).toMatchObject({ code: 0, stdout: "42\n" });
    const rb = join(dir, "prog.rb");
    writeFileSync(rb, "puts 1\n");
    const refused = await sandgate(["exec", "-f", rb]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/--language: python \(py, python3\), javascript \(js, node, nodejs\)/);
  });
});
