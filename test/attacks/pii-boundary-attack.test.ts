// Attacks on PII at the boundary: paths by which a value from a real upstream tool result could reach
// the agent untokenized (long streamed lines, later calls of a session, image notes, raw downloads).

import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/app/index.js";
import { PiiBoundary } from "../../src/features/codemode/pii-boundary.js";
import { loadConfig, upstreamServerSchema, type SandgateConfig } from "../../src/config/index.js";
import { compilePatterns } from "../../src/features/pii/index.js";
import { startHttpServer, type RunningServer } from "../../src/server/index.js";
import { callTool, connectMcp, toolText } from "../fixtures/mcp-client.js";
import { createTestApp } from "../helpers.js";
import { appContext } from "../server-helpers.js";

const PKG = join(process.cwd(), "node_modules/@modelcontextprotocol");
const EVERYTHING = join(PKG, "server-everything/dist/index.js");

interface WireResult {
  status: string;
  stdout: string;
  stderr: string;
  images_note?: string;
}

let dir: string;
let config: SandgateConfig;
let app: App | undefined;
let server: RunningServer;
let client: Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-pii-attack-"));
  chmodSync(dir, 0o755);
  const base = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" });
  config = {
    ...base,
    mcpServers: {
      everything: upstreamServerSchema.parse({ command: process.execPath, args: [EVERYTHING, "stdio"] }),
      // Its tool hello answers with the arguments it got, as JSON: a result whose keys the code chooses.
      changing: upstreamServerSchema.parse({ command: process.execPath, args: [join(process.cwd(), "test/fixtures/upstream/changing-tools.mjs")] }),
      // The same with tokenization off: its results are not scanned, yet may hold values of other tools.
      plain: upstreamServerSchema.parse({ command: process.execPath, args: [join(process.cwd(), "test/fixtures/upstream/changing-tools.mjs")] }),
    },
    // An admin's pattern that backtracks exponentially on Z and a run of x without a Y.
    pii: { ...base.pii, types: [...base.pii.types, "slow"], patterns: [{ name: "slow", regex: "Z(x|x)*Y" }], tools: { plain: { enabled: false } } },
  };
  app = createTestApp(config, { pool: { python: 1, javascript: 0, bash: 0 }, upstream: true });
  await app.start();
  server = await startHttpServer(appContext(app));
  ({ client } = await connectMcp(server.url, { name: "pii-attack-test" }));
}, 60_000);

afterAll(async () => {
  await client?.close();
  await server?.close();
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** execute_code over MCP; neither its structured result nor its text may hold `raw`. */
async function run(code: string, extra: Record<string, unknown>, raw: string): Promise<WireResult> {
  const result = await callTool(client, "execute_code", { language: "python", code, ...extra });
  expect(JSON.stringify(result.structuredContent)).not.toContain(raw);
  expect(toolText(result)).not.toContain(raw);
  return result.structuredContent as unknown as WireResult;
}

const echo = (email: string): string => `r = await call_mcp_tool("everything.echo", {"message": "${email}"})`;

describe("paths by which tool data could reach the agent whole", () => {
  it("a long line streamed in pieces without a line end never passes a value cut in two", async () => {
    let streamed = "";
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void (streamed += String(n.params.data)));
    const email = "zoe.longline@example.com";
    const code = ["import sys, time", echo(email), "for i in range(400):", "    sys.stdout.write('x' * (i % 7 + 1) + ' ' + r + ' ')", "    sys.stdout.flush()", "    if i % 50 == 0: time.sleep(0.05)"].join("\n");
    const r = await run(code, {}, email);
    expect(r.stdout).toContain("x Echo: [EMAIL_");
    expect(streamed).toContain("x Echo: [EMAIL_");
    // Every piece streamed is whole: nothing of the value is left between two tokens.
    expect(streamed.replace(/\[EMAIL_\d+\]/g, "")).not.toMatch(/zoe|longline|example/);
  });

  it("a later call of a session that prints an earlier result reformatted still shows a token", async () => {
    const email = "yara.later@example.com";
    await run(echo(email), { session_id: "later" }, email);
    const r = await run("print(r.upper())\nprint(r)", { session_id: "later" }, email.toUpperCase());
    expect(r.stdout).toMatch(/^ECHO: \[EMAIL_\d+\]\nEcho: \[EMAIL_1\]\n$/);
    await callTool(client, "stop_session", { session_id: "later" });
  });

  it("the note on a refused image and the text of an SVG image hold tokens, not tool data", async () => {
    const email = "xena.img@example.com";
    const note = await run(`${echo(email)}\nreturn_image({"type": "image", "mimeType": r[6:], "data": "AAAA"})`, {}, email);
    expect(note.images_note).toContain('type "[EMAIL_');
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>{r}</text></svg>`;
    const code = `import base64\n${echo(email)}\nreturn_image({"type": "image", "mimeType": "image/svg+xml", "data": base64.b64encode(f'${svg}'.encode()).decode()})`;
    const result = await callTool(client, "execute_code", { language: "python", code });
    const image = result.content.find((c) => c.type === "image") as { data: string } | undefined;
    expect(image).toBeDefined();
    const text = Buffer.from(image!.data, "base64").toString("utf8");
    expect(text).toMatch(/<text>Echo: \[EMAIL_\d+\]<\/text>/);
    expect(JSON.stringify(result)).not.toContain(Buffer.from(email).toString("base64").slice(0, 12));
  });

  it("a raw REST download and the file listing of a session holding tool data show tokens", async () => {
    const email = "wendy.dl@example.com";
    const code = `${echo(email)}\nopen("/workspace/out.txt", "w").write(("line " + r + "\\n") * 5000 + r)\nopen("/workspace/" + r[6:] + ".json", "w").write("{}")\nopen("/workspace/bin.dat", "wb").write(bytes(range(256)) + r.encode())`;
    const executed = await fetch(`${server.url}/execute`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ language: "python", code, session_id: "dl" }) });
    expect(executed.status).toBe(200);
    const res = await fetch(`${server.url}/sessions/dl/files/content?path=out.txt`);
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).not.toContain(email);
    expect(body.split("\n")).toHaveLength(5001);
    expect(body.endsWith("Echo: [EMAIL_1]")).toBe(true);
    // A binary file passes byte for byte.
    const bin = Buffer.from(await (await fetch(`${server.url}/sessions/dl/files/content?path=bin.dat`)).arrayBuffer());
    expect(bin.subarray(0, 256).equals(Buffer.from(Array.from({ length: 256 }, (_, i) => i)))).toBe(true);
    const list = await fetch(`${server.url}/sessions/dl/files`);
    const listed = await list.text();
    expect(listed).toContain("[EMAIL_1].json");
    expect(listed).not.toContain(email);
    await fetch(`${server.url}/sessions/dl`, { method: "DELETE" });
  });

  it("output made to match the first characters of hundreds of known values everywhere is scanned in one pass, and those values still show as tokens", { timeout: 90_000 }, async () => {
    // 180 emails sharing their first characters, of a hundred lengths; then a megabyte of those characters.
    const code = [
      'emails = ["aaa" + "a" * k + "@" + ("b" * 60 + ".") * d + "example.com" for k in range(1, 61) for d in range(3)]',
      'r = await call_mcp_tool("everything.echo", {"message": " ".join(emails)})',
      'print("a" * 1_000_000)',
      "print(emails[0], emails[-1])",
    ].join("\n");
    const result = await callTool(client, "execute_code", { language: "python", code, session_id: "flood" });
    const r = result.structuredContent as unknown as WireResult & { full_output?: { stdout?: string } };
    expect(r.status).toBe("ok");
    expect(JSON.stringify(result)).not.toMatch(/a@|b\.example\.com/);
    expect(r.stdout.trimEnd().endsWith("[EMAIL_1] [EMAIL_180]")).toBe(true);
    await callTool(client, "stop_session", { session_id: "flood" });
  });

  it("a custom pattern that backtracks exponentially cannot hold the server on a long run of its characters", async () => {
    const r = await run('r = await call_mcp_tool("everything.echo", {"message": "Z" + "x" * 3000 + " ZxxY"})\nprint(r[-5:])', {}, "ZxxY");
    expect(r.stdout).toBe(" [SLOW_1]\n");
    // Where the linear engine cannot take over (the i flag), such a pattern is refused when the config is read.
    expect(() => compilePatterns([{ name: "slow", regex: "Z(x|x)*Y", flags: "i" }])).toThrow(/"slow" repeats a group with alternatives/);
  });

  it("personal data used as keys of a tool result does not become property names in the inferred signature search_tools shows", async () => {
    const iban = "DE89370400440532013000";
    const r = await run(`r = await call_mcp_tool("changing.hello", {"who": "x", "${iban}": {"balance": 10}})\nprint(sorted(r["args"]))`, {}, iban);
    expect(r.stdout).toBe("['[IBAN_1]', 'who']\n");
    const found = await callTool(client, "search_tools", { query: "hello", detail: "full", server: "changing" });
    expect(JSON.stringify(found)).not.toContain(iban);
    expect(toolText(found)).toContain("balance: number");
  });

  it("a value from one tool used as a key of a result of a server with tokenization off does not become a property name search_tools shows", async () => {
    const iban = "GB82WEST12345698765432";
    await run(`${echo(`IBAN ${iban}`)}\nr2 = await call_mcp_tool("plain.hello", {"who": "x", r[11:]: {"visits": 3}})\nprint(sorted(r2["args"]))`, {}, iban);
    const found = await callTool(client, "search_tools", { query: "hello", detail: "full", server: "plain" });
    expect(JSON.stringify(found)).not.toContain(iban);
    expect(toolText(found)).toContain("visits: number");
  });

  it("a phone, SSN or IBAN from a tool result that code prints without separators or in lower case shows as a token", async () => {
    const r = await run(
      [
        'r = await call_mcp_tool("everything.echo", {"message": "tel +1 415 555 0100, SSN 123-45-6789, IBAN DE89 3704 0044 0532 0130 00"})',
        "import re",
        'print(re.sub(r"\\D", "", r.split(",")[0])[-10:], "123456789", "de89370400440532013000")',
        'print("order 94155550100123 stays")',
      ].join("\n"),
      {},
      "de89370400440532013000",
    );
    expect(r.stdout).toMatch(/^\[PHONE_\d+\] \[SSN_\d+\] \[IBAN_\d+\]\norder 94155550100123 stays\n$/);
  });
});

describe("tool data the code prints or returns in another form", () => {
  it("an email printed URL-encoded in a link, and one with accents printed by json.dumps (ASCII escapes), show as tokens", async () => {
    const r = await run(
      [
        echo("ann.lee+news@example.com jörg.müller@exämple.de"),
        "import json, urllib.parse",
        "ann, jorg = r[6:].split()",
        'print("https://crm.test/find?email=" + urllib.parse.quote(ann))',
        'print(urllib.parse.urlencode({"to": jorg}))',
        'print(json.dumps({"e": jorg}))',
      ].join("\n"),
      {},
      "news%40",
    );
    expect(r.stdout).toMatch(/^https:\/\/crm\.test\/find\?email=\[EMAIL_\d+\]\nto=\[EMAIL_\d+\]\n\{"e": "\[EMAIL_\d+\]"\}\n$/);
  });

  it("a card or phone number that the code returns as a JSON number shows as a token", async () => {
    const code = `${echo("card 4111 1111 1111 1111, tel (415) 555-2671")}\nimport re\nd = re.sub(r"\\D", "", r)\n{"card": int(d[:16]), "phone": [int(d[16:])], "n": 42}`;
    const result = await callTool(client, "execute_code", { language: "python", code });
    expect(JSON.stringify(result)).not.toMatch(/4111111111111111|4155552671/);
    expect((result.structuredContent as { value?: unknown }).value).toEqual({ card: expect.stringMatching(/^\[CREDIT_CARD_\d+\]$/), phone: [expect.stringMatching(/^\[PHONE_\d+\]$/)], n: 42 });
  });

  it("file_read of a Latin-1 file the code wrote from a tool result hands its bytes over with tokens for the values", async () => {
    const email = "ulla.latin@example.com";
    await run(`${echo(email)}\nopen("/workspace/export.csv", "w", encoding="latin-1").write("name;mail\\nRené;" + r[6:] + "\\n")`, { session_id: "latin" }, email);
    const read = await callTool(client, "file_read", { session_id: "latin", path: "export.csv" });
    const blobs = [...JSON.stringify(read).matchAll(/"(?:blob|content)":"([A-Za-z0-9+/=]{16,})"/g)].map((m) => Buffer.from(m[1]!, "base64"));
    expect(blobs.length).toBeGreaterThan(0);
    for (const blob of blobs) expect(blob.equals(Buffer.from("name;mail\nRené;[EMAIL_1]\n", "latin1"))).toBe(true);
    await callTool(client, "stop_session", { session_id: "latin" });
  });

  it("a raw REST download of a Latin-1 file the code wrote from a tool result holds tokens for the values, its other bytes as they were", async () => {
    const code = `${echo("ulla.rest@example.com")}\nopen("/workspace/export.csv", "w", encoding="latin-1").write("name;mail\\nRené;" + r[6:] + "\\n")`;
    const executed = await fetch(`${server.url}/execute`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ language: "python", code, session_id: "dl-latin" }) });
    expect(executed.status).toBe(200);
    const res = await fetch(`${server.url}/sessions/dl-latin/files/content?path=export.csv`);
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.equals(Buffer.from("name;mail\nRené;[EMAIL_1]\n", "latin1"))).toBe(true);
    await fetch(`${server.url}/sessions/dl-latin`, { method: "DELETE" });
  });

  it("a tool id the code built from tool data shows a token in tool_calls", async () => {
    const email = "vera.tool@example.com";
    const r = await run(`${echo(email)}\ntry:\n    await call_mcp_tool("changing.notify_" + r[6:], {})\nexcept Exception as e:\n    print(type(e).__name__)`, {}, email);
    expect(r.stdout).toBe("ToolError\n");
  });
});

describe("a flood saved as it is printed", () => {
  it("is tokenized in its saved copy too when a tool result turned tokenization on after it began", async () => {
    const email = "flora.flood@example.com";
    const code = [
      "import sys",
      "for i in range(40000): sys.stdout.write(f'{i:07d} filler printed before any tool result\\n')",
      "sys.stdout.flush()",
      echo(email),
      "print('got', r)",
      "for i in range(40000): sys.stdout.write(f'{i:07d} filler printed after the tool result\\n')",
    ].join("\n");
    const r = (await run(code, {}, email)) as WireResult & { full_output?: { stdout?: string } };
    expect(r.status).toBe("ok");
    const saved = await client.readResource({ uri: r.full_output!.stdout! });
    const text = (saved.contents[0] as { text: string }).text;
    expect(text.length).toBeGreaterThan(3_000_000);
    // The session's vault numbers its values in order of appearance: earlier tests here issued some.
    expect(text).toMatch(/\ngot Echo: \[EMAIL_\d+\]\n/);
    expect(text).not.toContain(email);
  });
});

describe("tokens a sandbox sends back", () => {
  it("a tool call whose tokens would swap back to hundreds of megabytes fails with a tool error, and the next call works", async () => {
    const email = `${"a".repeat(64)}@${"b".repeat(60)}.${"c".repeat(60)}.example.com`;
    const code = [
      echo(email),
      "try:",
      '    await call_mcp_tool("everything.echo", {"message": "[EMAIL_1]" * 1_000_000})',
      "except Exception as e:",
      "    print(type(e).__name__, str(e)[-43:])",
      'print(await call_mcp_tool("everything.echo", {"message": "[EMAIL_1]"}))',
    ].join("\n");
    const r = await run(code, {}, email);
    expect(r.stdout).toBe("ToolError more than 4 MiB; pass fewer tokens per call\nEcho: [EMAIL_1]\n");
  });
});

describe("a hostile sandbox", () => {
  it("a result frame nesting a value a hundred thousand levels deep after a tool call is refused like any too deep value, not an internal error", async () => {
    const code = [
      echo("deep.value@example.com"),
      "import sandgate, sandgate_frames as F, time",
      "deep = '[' * 100_000 + '\"deep.value@example.com\"' + ']' * 100_000",
      'F.send_frame_bytes((\'{"type":"result","id":"%s","ok":true,"exitCode":0,"valueKind":"json","value":\' % sandgate._channel.run_id + deep + "}").encode())',
      "time.sleep(1)",
    ].join("\n");
    const result = await callTool(client, "execute_code", { language: "python", code, session_id: "deep" });
    const r = result.structuredContent as unknown as WireResult & { value?: unknown };
    expect(r.status).toBe("ok");
    expect(r.value).toBe("[a value nested more than 256 levels deep, not shown]");
    await callTool(client, "stop_session", { session_id: "deep" });
  });
});

describe("vault memory across sessions and callers", () => {
  it("all vaults together hold a bounded number of values: past it new values are redacted, and a dropped vault gives its room back", () => {
    const boundary = new PiiBoundary(loadConfig({}).pii, 900_000, 4);
    const both = (n: string): string => `a${n}@example.com b${n}@example.com`;
    const session = boundary.execution("key:1", "s1");
    session.learn("everything", ["echo"], both("s"));
    expect(session.text(both("s"), false)).toBe("[EMAIL_1] [EMAIL_2]");
    // Every unauthenticated MCP session is a caller of its own, each with a vault.
    const first = boundary.execution("mcp:1", null);
    first.learn("everything", ["echo"], both("1"));
    expect(first.text(both("1"), false)).toBe("[EMAIL_1] [EMAIL_2]");
    const second = boundary.execution("mcp:2", null);
    second.learn("everything", ["echo"], both("2"));
    expect(second.text(both("2"), false)).toBe("[EMAIL_REDACTED] [EMAIL_REDACTED]");
    boundary.sessionEnded("key:1", "s1");
    const third = boundary.execution("mcp:3", null);
    third.learn("everything", ["echo"], both("3"));
    expect(third.text(both("3"), false)).toBe("[EMAIL_1] [EMAIL_2]");
  });
});
