// `sandgate pii` as a user runs it (dist/, `npm run build` first): text on stdin, tokens on stdout.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cliPath, runCli, type CliResult } from "../fixtures/cli.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-cli-pii-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sandgate(args: string[], input: string): Promise<CliResult> {
  return runCli(args, { input, env: { SANDBOX_DIR: dir } });
}

/** Feeds `lines` batches of `line` to `sandgate ...args` and resolves with its exit code, stdout size and a digest of it. */
function streamed(args: string[], line: string, lines: number): Promise<{ code: number | null; bytes: number; stderr: string; head: string; distinct: Set<string> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath(), ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", SANDBOX_DIR: dir }, stdio: ["pipe", "pipe", "pipe"] });
    let bytes = 0;
    let head = "";
    let stderr = "";
    const distinct = new Set<string>();
    child.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (head.length < 200) head += chunk.toString("utf8");
      for (const token of chunk.toString("utf8").match(/\[EMAIL_\d+\]/g) ?? []) distinct.add(token);
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, bytes, stderr, head, distinct }));
    child.stdin.on("error", () => undefined); // the command may stop reading once it refuses the input
    let sent = 0;
    const block = line.repeat(1024);
    const pump = (): void => {
      while (sent < lines) {
        sent += 1024;
        if (!child.stdin.write(block)) return void child.stdin.once("drain", pump);
      }
      child.stdin.end();
    };
    pump();
  });
}

describe("sandgate pii", () => {
  it("prints standard input with personal data replaced by stable tokens", async () => {
    const r = await sandgate(["pii"], "Mail ann@example.com or call (415) 555-2671.\nAgain: ann@example.com, card 4111 1111 1111 1111\n");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Mail [EMAIL_1] or call [PHONE_1].\nAgain: [EMAIL_1], card [CREDIT_CARD_1]\n");
  });

  it("with --json prints the text and its entities, offsets in code points", async () => {
    const r = await sandgate(["pii", "--json"], "🙂 ann@example.com");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: "🙂 [EMAIL_1]", entities: [{ type: "email", token: "[EMAIL_1]", start: 2, end: 17 }] });
  });

  it("with --types looks only for those kinds", async () => {
    const r = await sandgate(["pii", "--types", "phone"], "ann@example.com (415) 555-2671");
    expect(r.stdout).toBe("ann@example.com [PHONE_1]");
  });

  it("uses pii.types and the custom patterns of the config file", async () => {
    const config = join(dir, "sandgate.json");
    writeFileSync(config, JSON.stringify({ pii: { types: ["email", "employee_id"], patterns: [{ name: "employee_id", regex: "EMP-\\d{6}" }] } }));
    const r = await sandgate(["pii", "--config", config], "EMP-123456 is ann@example.com, (415) 555-2671");
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("[EMPLOYEE_ID_1] is [EMAIL_1], (415) 555-2671");
  });

  it("exits 2 with one line on a bad flag, an unknown kind or a pattern that does not compile", async () => {
    const flag = await sandgate(["pii", "--nope"], "x");
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--nope/);
    const kind = await sandgate(["pii", "--types", "email,passport"], "x");
    expect(kind.code).toBe(2);
    expect(kind.stderr).toMatch(/unknown PII kind "passport"; use email, phone.*INVALID_INPUT/);
    const config = join(dir, "bad.json");
    writeFileSync(config, JSON.stringify({ pii: { patterns: [{ name: "broken", regex: "(x" }] } }));
    const pattern = await sandgate(["pii", "--config", config], "x");
    expect(pattern.code).toBe(2);
    expect(pattern.stderr).toMatch(/pattern "broken" is not a valid regular expression.*CONFIG_INVALID/);
  });

  it("a config naming a kind nobody defined, or a pattern taking a built-in kind's name, stops every command at start naming the key", async () => {
    const cases: [unknown, RegExp][] = [
      [{ pii: { types: ["email", "ticket"] } }, /pii\.types\.1: unknown PII kind "ticket"; use email, .*, or add a pattern of that name to pii\.patterns \[CONFIG_INVALID\]/],
      [{ pii: { tools: { crm: { types: ["badge"] } } } }, /pii\.tools\.crm\.types\.0: unknown PII kind "badge"/],
      [{ pii: { patterns: [{ name: "email", regex: "x@y" }] } }, /pii\.patterns\.0\.name: "email" is a built-in kind; give the pattern a name of its own/],
      [{ pii: { patterns: [{ name: "t", regex: "a" }, { name: "t", regex: "b" }] } }, /pii\.patterns\.1\.name: a pattern named "t" comes earlier/],
    ];
    const config = join(dir, "kinds.json");
    for (const [content, message] of cases) {
      writeFileSync(config, JSON.stringify(content));
      for (const args of [["pii"], ["config", "--print"]]) {
        const r = await sandgate([...args, "--config", config], "ann@example.com");
        expect(r.code, `${args.join(" ")} ${JSON.stringify(content)}`).toBe(2);
        expect(r.stdout).toBe("");
        expect(r.stderr).toMatch(message);
      }
    }
  });

  it("streams a large input line by line with one vault for all of it", async () => {
    const line = "2024-01-15T10:30:00Z user=ann@example.com action=login bytes=1048576 id=550e8400-e29b-41d4-a716-446655440000\n";
    const lines = 96 * 1024; // about 11 MiB
    const r = await streamed(["pii"], line, lines);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = line.replace("ann@example.com", "[EMAIL_1]");
    expect(r.head.startsWith(out)).toBe(true);
    expect(r.bytes).toBe(Buffer.byteLength(out) * lines);
    expect([...r.distinct]).toEqual(["[EMAIL_1]"]);
  });

  it("refuses more than 64 MiB with --json, saying to stream instead", async () => {
    const line = "x".repeat(1023) + "\n";
    const r = await streamed(["pii", "--json"], line, 65 * 1024 + 1024);
    expect(r.code).toBe(2);
    expect(r.bytes).toBe(0);
    expect(r.stderr).toMatch(/larger than 64 MiB.*leave out --json/);
  });
});
