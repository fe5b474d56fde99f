// PII at the boundary, end to end: real upstream servers (server-everything's echo, server-memory)
// called from real sandboxes through the real server; the agent sees tokens, the code and the tools real values.

import { mkdtempSync, readdirSync, readFileSync, rmSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/app/index.js";
import { loadConfig, upstreamServerSchema, type SandgateConfig } from "../../src/config/index.js";
import { startHttpServer, type RunningServer } from "../../src/server/index.js";
import { MetricSink } from "../../src/server/metric-sink.js";
import { Registry } from "prom-client";
import type { AuditLog } from "../../src/store/index.js";
import { callTool, connectMcp, toolText, type ToolResult } from "../fixtures/mcp-client.js";
import { createTestApp } from "../helpers.js";
import { appContext, jsonApi, parseSse } from "../server-helpers.js";

const NODE = process.execPath;
const PKG = join(process.cwd(), "node_modules/@modelcontextprotocol");
const EVERYTHING = join(PKG, "server-everything/dist/index.js");

interface WireResult {
  status: string;
  stdout: string;
  stderr: string;
  value?: unknown;
  error?: { type: string; message: string; traceback: string };
  tool_calls: { tool: string; ok: boolean; error?: string; note?: string }[];
}

let dir: string;
let config: SandgateConfig;
let app: App | undefined;
let server: RunningServer;
let client: Client;
let audit: AuditLog;
const registry = new Registry();

async function call(name: string, args: Record<string, unknown>, on: Client = client): Promise<ToolResult> {
  return callTool(on, name, args);
}

/** execute_code through MCP; both the structured result and its text must be free of `raw`. */
async function run(language: string, code: string, extra: Record<string, unknown> = {}, raw: readonly string[] = []): Promise<WireResult> {
  const result = await call("execute_code", { language, code, ...extra });
  const text = toolText(result);
  for (const value of raw) {
    expect(JSON.stringify(result.structuredContent)).not.toContain(value);
    expect(text).not.toContain(value);
  }
  return result.structuredContent as unknown as WireResult;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-pii-boundary-"));
  chmodSync(dir, 0o755);
  const base = loadConfig({ SANDBOX_DIR: dir, MAX_EXECUTION_TIME: "20" });
  const servers = {
    everything: { command: NODE, args: [EVERYTHING, "stdio"] },
    // The same server twice more: one with tokenization off, one scanned for a custom kind only.
    quiet: { command: NODE, args: [EVERYTHING, "stdio"] },
    tickets: { command: NODE, args: [EVERYTHING, "stdio"] },
    memory: { command: NODE, args: [join(PKG, "server-memory/dist/index.js")], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } },
  };
  config = {
    ...base,
    mcpServers: Object.fromEntries(Object.entries(servers).map(([name, s]) => [name, upstreamServerSchema.parse(s)])),
    pii: {
      ...base.pii,
      types: [...base.pii.types, "ticket"],
      patterns: [{ name: "ticket", regex: "TCK-[0-9]{6}" }],
      tools: { quiet: { enabled: false }, "tickets.echo": { types: ["ticket"] } },
    },
  };
  app = createTestApp(config, { pool: { python: 1, javascript: 1, bash: 1 }, governed: true, upstream: true, audit: true });
  app.governance.events.subscribe(new MetricSink(registry, new Set(Object.keys(servers))));
  if (!app.audit) throw new Error("the app keeps no audit log");
  audit = app.audit;
  await app.start();
  server = await startHttpServer(appContext(app));
  ({ client } = await connectMcp(server.url, { name: "pii-boundary-test" }));
}, 60_000);

afterAll(async () => {
  await client?.close();
  await server?.close();
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("what crosses to the agent", () => {
  it("Python, JavaScript and Bash print an upstream email as a token while the code works on the real value", async () => {
    const email = "alice.pb@example.com";
    const py = await run(
      "python",
      [`r = await call_mcp_tool("everything.echo", {"message": "${email}"})`, "print(r)", `print(r == "Echo: ${email}")`].join("\n"),
      { session_id: "langs" },
      [email],
    );
    expect(py.status, py.stderr).toBe("ok");
    expect(py.stdout).toBe("Echo: [EMAIL_1]\nTrue\n");
    const js = await run(
      "javascript",
      [`const r = await callMCPTool("everything.echo", { message: "${email} and bob.pb@example.com" });`, "console.log(r);", `console.log(r.startsWith("Echo: ${email}"));`].join("\n"),
      { session_id: "langs" },
      [email, "bob.pb@example.com"],
    );
    expect(js.stdout).toBe("Echo: [EMAIL_1] and [EMAIL_2]\ntrue\n");
    const sh = await run("bash", `r=$(sandgate-tool everything echo '{"message": "carl.pb@example.com"}')\necho "$r"\n[ "$r" = '"Echo: carl.pb@example.com"' ] && echo same`, { session_id: "langs" }, ["carl.pb@example.com"]);
    expect(sh.status, sh.stderr).toBe("ok");
    expect(sh.stdout).toBe('"Echo: [EMAIL_3]"\nsame\n');
    await call("stop_session", { session_id: "langs" });
  });

  it("phones, cards, IBANs, SSNs and IP addresses in a tool result are tokenized in all three languages", async () => {
    const values = { phone: "+1 415-555-2671", card: "4111 1111 1111 1111", iban: "DE89 3704 0044 0532 0130 00", ssn: "536-22-1234", ip: "203.0.113.77" };
    const message = `call ${values.phone}, card ${values.card}, iban ${values.iban}, ssn ${values.ssn}, host ${values.ip}`;
    const raw = Object.values(values);
    const expected = "Echo: call [PHONE_1], card [CREDIT_CARD_1], iban [IBAN_1], ssn [SSN_1], host [IP_ADDRESS_1]";
    const py = await run("python", `print(await call_mcp_tool("everything.echo", {"message": "${message}"}))`, { session_id: "kinds" }, raw);
    expect(py.stdout).toBe(`${expected}\n`);
    const js = await run("javascript", `console.log(await callMCPTool("everything.echo", { message: "${message}" }))`, { session_id: "kinds" }, raw);
    expect(js.stdout).toBe(`${expected}\n`);
    const sh = await run("bash", `sandgate-tool everything echo '{"message": "${message}"}'`, { session_id: "kinds" }, raw);
    expect(sh.stdout).toBe(`"${expected}"\n`);
    await call("stop_session", { session_id: "kinds" });
  });

  it("gives a value the same token in every execution of a session, and another session its own vault", async () => {
    const echo = (message: string): string => `print(await call_mcp_tool("everything.echo", {"message": "${message}"}))`;
    const first = await run("python", `${echo("dana.pb@example.com")}\n${echo("erin.pb@example.com")}`, { session_id: "vault-a" });
    expect(first.stdout).toBe("Echo: [EMAIL_1]\nEcho: [EMAIL_2]\n");
    const again = await run("python", echo("erin.pb@example.com, dana.pb@example.com"), { session_id: "vault-a" });
    expect(again.stdout).toBe("Echo: [EMAIL_2], [EMAIL_1]\n");
    // Session b learns erin first; vault-a's [EMAIL_2] means nothing there and reaches the tool as typed.
    const other = await run("python", `${echo("erin.pb@example.com")}\nr = await call_mcp_tool("everything.echo", {"message": "[EMAIL_2]"})\nprint(r == "Echo: [EMAIL_2]")`, {
      session_id: "vault-b",
    });
    expect(other.stdout).toBe("Echo: [EMAIL_1]\nTrue\n");
    await call("stop_session", { session_id: "vault-a" });
    await call("stop_session", { session_id: "vault-b" });
  });

  it("calls without a session share the caller's vault", async () => {
    const one = await run("python", 'print(await call_mcp_tool("everything.echo", {"message": "fred.pb@example.com"}))');
    const two = await run("python", 'print(await call_mcp_tool("everything.echo", {"message": "gina.pb@example.com fred.pb@example.com"}))');
    const token = /\[EMAIL_\d+\]/.exec(one.stdout)?.[0];
    expect(token).toBeDefined();
    expect(two.stdout).toContain(`${token}\n`);
    expect(two.stdout).not.toContain("@example.com");
  });

  it("the returned value, stderr, the error message and traceback are tokenized", async () => {
    const email = "hank.pb@example.com";
    const r = await run(
      "python",
      [`import sys`, `r = await call_mcp_tool("everything.echo", {"message": "${email}"})`, "print(r, file=sys.stderr)", "{'who': r, r: 1}"].join("\n"),
      { session_id: "shapes" },
      [email],
    );
    expect(r.stderr).toBe("Echo: [EMAIL_1]\n");
    expect(r.value).toEqual({ who: "Echo: [EMAIL_1]", "Echo: [EMAIL_1]": 1 });
    const failed = await run("python", `r = await call_mcp_tool("everything.echo", {"message": "${email}"})\nraise ValueError("bad " + r)`, { session_id: "shapes" }, [email]);
    expect(failed.error?.message).toContain("bad Echo: [EMAIL_1]");
    expect(failed.error?.traceback).toContain("[EMAIL_1]");
    // The JSON-escaped form of a value is found by the detectors that were on for the execution's calls.
    const escaped = await run("python", `import json\nr = await call_mcp_tool("everything.echo", {"message": "ivy.pb@example.com"})\nprint(json.dumps(r.upper()))`, { session_id: "shapes" }, [
      "IVY.PB@EXAMPLE.COM",
    ]);
    expect(escaped.stdout).toMatch(/^"ECHO: \[EMAIL_\d\]"\n$/);
    await call("stop_session", { session_id: "shapes" });
  });

  it("a tool call's error quoting personal data reaches the code whole and the agent tokenized", async () => {
    const email = "uma.pb@example.com";
    const r = await run(
      "python",
      [
        "try:",
        `    await call_mcp_tool("memory.add_observations", {"observations": [{"entityName": "${email}", "contents": ["x"]}]})`,
        "except ToolError as e:",
        `    print("${email}" in str(e))`,
        "    print(e)",
      ].join("\n"),
      { session_id: "errors" },
    );
    expect(r.tool_calls[0]?.ok).toBe(false);
    expect(r.tool_calls[0]?.error).toContain("[EMAIL_1]");
    expect(r.tool_calls[0]?.error).not.toContain(email);
    expect(r.stdout).toMatch(/^True\n.*\[EMAIL_1\]/);
    expect(r.stdout).not.toContain(email);
    await call("stop_session", { session_id: "errors" });
  });

  it("output streamed while the code runs is tokenized, even a value split across two writes", async () => {
    let streamed = "";
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void (streamed += String(n.params.data)));
    const email = "jack.pb@example.com";
    const r = await run(
      "python",
      [
        "import sys, time",
        `r = await call_mcp_tool("everything.echo", {"message": "${email}"})`,
        "sys.stdout.write(r[:12]); sys.stdout.flush()",
        "time.sleep(0.3)",
        "sys.stdout.write(r[12:] + '\\n'); sys.stdout.flush()",
        "time.sleep(0.3)",
        "print('done', flush=True)",
      ].join("\n"),
      { session_id: "stream" },
      [email],
    );
    expect(r.stdout).toBe("Echo: [EMAIL_1]\ndone\n");
    expect(streamed).toContain("Echo: [EMAIL_1]");
    expect(streamed).not.toContain(email);
    expect(streamed).not.toContain("jack.pb");
    await call("stop_session", { session_id: "stream" });
  });

  it("a background job's output and result read with get_job are tokenized", async () => {
    const email = "kate.pb@example.com";
    const started = await call("execute_code", {
      language: "python",
      code: `import time\nr = await call_mcp_tool("everything.echo", {"message": "${email}"})\nprint(r, flush=True)\ntime.sleep(0.5)\nprint("end")`,
      background: true,
    });
    const id = started.structuredContent.job_id as string;
    let job = (await call("get_job", { job_id: id, wait_s: 10 })).structuredContent as unknown as { status: string; stdout: string; result?: WireResult };
    const seen = [job.stdout];
    while (job.status === "running") {
      job = (await call("get_job", { job_id: id, wait_s: 10 })).structuredContent as unknown as typeof job;
      seen.push(job.stdout);
    }
    expect(job.result?.stdout).toMatch(/^Echo: \[EMAIL_\d+\]\nend\n$/);
    expect(seen.join("")).toContain("Echo: [EMAIL_");
    expect(JSON.stringify(job)).not.toContain(email);
  });

  it("file_read of a file the code wrote from a tool result is tokenized; files of a session without tool data are not", async () => {
    const email = "liam.pb@example.com";
    await run("python", `r = await call_mcp_tool("everything.echo", {"message": "${email}"})\nopen("/workspace/out.txt", "w").write(r)`, { session_id: "files" });
    const read = await call("file_read", { session_id: "files", path: "out.txt" });
    expect(toolText(read)).toBe("Echo: [EMAIL_1]");
    expect(JSON.stringify(read.structuredContent)).not.toContain(email);
    await run("python", `open("/workspace/plain.txt", "w").write("${email}")`, { session_id: "files-plain" });
    expect(toolText(await call("file_read", { session_id: "files-plain", path: "plain.txt" }))).toBe(email);
    await call("stop_session", { session_id: "files" });
    await call("stop_session", { session_id: "files-plain" });
  });

  it("a long output's saved full text, read back as a resource, holds tokens too", async () => {
    const email = "walt.pb@example.com";
    const r = (await run("python", `r = await call_mcp_tool("everything.echo", {"message": "${email}"})\nfor i in range(3000):\n    print(i, r)`, {}, [email])) as WireResult & {
      full_output?: { stdout?: string };
    };
    const uri = r.full_output?.stdout;
    expect(uri).toMatch(/^sandgate:\/\/outputs\//);
    const saved = await client.readResource({ uri: uri! });
    const text = saved.contents.map((c) => ("text" in c ? c.text : "")).join("");
    expect(text).toContain("2999 Echo: [EMAIL_");
    expect(text).not.toContain(email);
  });

  it("REST /execute returns the same tokens", async () => {
    const api = jsonApi(() => server.url);
    const email = "mona.pb@example.com";
    const r = await api<WireResult>("/execute", { json: { language: "python", code: `print(await call_mcp_tool("everything.echo", {"message": "${email}"}))` } });
    expect(r.status).toBe(200);
    expect(r.body.stdout).toMatch(/^Echo: \[EMAIL_\d+\]\n$/);
    // Streamed as server-sent events: a value written in two pieces is still one token.
    const code = `import sys, time\nr = await call_mcp_tool("everything.echo", {"message": "${email}"})\nsys.stdout.write(r[:10]); sys.stdout.flush()\ntime.sleep(0.3)\nprint(r[10:])`;
    const streamed = await fetch(`${server.url}/execute?stream=1`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ language: "python", code }) });
    const events = parseSse(await streamed.text());
    const stdout = events.filter((e) => e.event === "stdout").map((e) => (JSON.parse(e.data) as { text: string }).text);
    expect(stdout.join("")).toMatch(/^Echo: \[EMAIL_\d+\]\n$/);
    expect(JSON.stringify(events)).not.toContain("mona.pb");
  });
});

describe("what goes back to the tools", () => {
  it("a token the agent writes in its next execution reaches server-memory as the real value", async () => {
    const email = "nina.pb@example.com";
    const first = await run("python", `print(await call_mcp_tool("everything.echo", {"message": "${email}"}))`, { session_id: "round" });
    expect(first.stdout).toBe("Echo: [EMAIL_1]\n");
    const second = await run(
      "python",
      [
        "from servers.memory import create_entities, open_nodes",
        'await create_entities(entities=[{"name": "nina", "entityType": "person", "observations": ["mail [EMAIL_1] today"]}])',
        'g = await open_nodes(names=["nina"])',
        "obs = g['entities'][0]['observations'][0]",
        `print(obs == "mail ${email} today")`,
        "print(obs)",
      ].join("\n"),
      { session_id: "round" },
      [email],
    );
    expect(second.status, second.stderr).toBe("ok");
    expect(second.stdout).toBe("True\nmail [EMAIL_1] today\n");
    expect(second.tool_calls.map((c) => c.note)).toEqual([undefined, undefined]);
    // The server stored the real value: the memory file holds it, not the token.
    expect(readFileSync(join(dir, "memory.jsonl"), "utf8")).toContain(`mail ${email} today`);
    await call("stop_session", { session_id: "round" });
  });

  it("the vault dies with its session: a new session of the same id no longer resolves the old token", async () => {
    const first = await run("python", 'print(await call_mcp_tool("everything.echo", {"message": "olga.pb@example.com"}))', { session_id: "reborn" });
    expect(first.stdout).toBe("Echo: [EMAIL_1]\n");
    await call("stop_session", { session_id: "reborn" });
    const again = await run("python", 'r = await call_mcp_tool("everything.echo", {"message": "[EMAIL_1]"})\nprint(r == "Echo: [EMAIL_1]")', { session_id: "reborn" });
    expect(again.stdout).toBe("True\n");
    await call("stop_session", { session_id: "reborn" });
  });

  it("a token this session did not issue (another session's) reaches the tool as typed, and the agent is told so", async () => {
    const first = await run("python", 'print(await call_mcp_tool("everything.echo", {"message": "paul.pb@example.com"}))', { session_id: "elsewhere" });
    expect(first.stdout).toBe("Echo: [EMAIL_1]\n");
    // Each session has a vault of its own, even another MCP session of the same caller.
    const { client: other } = await connectMcp(server.url, { name: "pii-boundary-other" });
    try {
      const result = await call("execute_code", { language: "python", session_id: "elsewhere-2", code: 'print(await call_mcp_tool("everything.echo", {"message": "to [EMAIL_1], [TODO_1] and [TICKET_4]"}))' }, other);
      const again = result.structuredContent as unknown as WireResult;
      expect(again.status, again.stderr).toBe("ok");
      expect(again.stdout).toBe("Echo: to [EMAIL_1], [TODO_1] and [TICKET_4]\n");
      expect(again.tool_calls[0]?.note).toMatch(/^\[EMAIL_1\], \[TICKET_4\] are not tokens of this session's personal data, so they reached the tool as typed/);
      expect(toolText(result)).toMatch(/\n- everything\.echo: \[EMAIL_1\], \[TICKET_4\] are not tokens of this session's personal data/);
    } finally {
      await call("stop_session", { session_id: "elsewhere-2" }, other);
      await other.close();
    }
    await call("stop_session", { session_id: "elsewhere" });
  });
});

describe("tokens written in tool results", () => {
  it("a token that a tool result holds as text (stored before the session issued it) never goes back to a tool as the value issued since", async () => {
    const second = "rita.pb@example.com";
    const code = [
      "from servers.memory import create_entities, open_nodes",
      // The agent stores a token its session has not issued yet: it reaches the server as typed.
      'await create_entities(entities=[{"name": "taint", "entityType": "note", "observations": ["call [EMAIL_2]"]}])',
      `r = await call_mcp_tool("everything.echo", {"message": "quinn.pb@example.com ${second}"})`,
      'obs = (await open_nodes(names=["taint"]))["entities"][0]["observations"][0]',
      // The code passes on what the server gave it: the text [EMAIL_2], not the second address.
      'e = await call_mcp_tool("everything.echo", {"message": obs})',
      'print(r)\nprint(e == "Echo: call [EMAIL_2]")',
      'f = await call_mcp_tool("everything.echo", {"message": "[EMAIL_1]"})',
      'print(f == "Echo: quinn.pb@example.com")',
    ].join("\n");
    const result = await run("python", code, { session_id: "taint" }, [second]);
    expect(result.status, result.stderr).toBe("ok");
    // The session's data already holds the text [EMAIL_2]: the second address gets the next number.
    expect(result.stdout).toBe("Echo: [EMAIL_1] [EMAIL_3]\nTrue\nTrue\n");
    await call("stop_session", { session_id: "taint" });
  });
});

describe("configuration", () => {
  it("a server with tokenization off passes its results untouched; a tool scanned for a custom kind tokenizes only that", async () => {
    const quiet = await run("python", 'print(await call_mcp_tool("quiet.echo", {"message": "pete.pb@example.com"}))', { session_id: "cfg-quiet" });
    expect(quiet.stdout).toBe("Echo: pete.pb@example.com\n");
    const tickets = await run("python", 'print(await call_mcp_tool("tickets.echo", {"message": "TCK-123456 for quinn.pb@example.com"}))', { session_id: "cfg-tickets" });
    expect(tickets.stdout).toBe("Echo: [TICKET_1] for quinn.pb@example.com\n");
    await call("stop_session", { session_id: "cfg-quiet" });
    await call("stop_session", { session_id: "cfg-tickets" });
  });

  it("execute_code's description tells the agent what tokens are and that they go back as they are", async () => {
    const execute = (await client.listTools()).tools.find((t) => t.name === "execute_code");
    expect(execute?.description).toContain("tokens like [EMAIL_1]; pass them back in tool arguments as they are");
  });

  it("code that makes no tool calls prints an email untouched: only tool data is tokenized", async () => {
    const r = await run("python", 'print("rose.pb@example.com")');
    expect(r.stdout).toBe("rose.pb@example.com\n");
  });
});

describe("the audit", () => {
  it("records counts per kind for the execution and its tool call, and never the value", async () => {
    const email = "sara.pb@audit-example.com";
    // The agent never typed the value: the code builds it, so only the tool's result carries it whole.
    const r = await run("python", `r = await call_mcp_tool("everything.echo", {"message": "sara.pb" + "@audit-example.com"})\nprint(r)\nprint(r)`, { session_id: "audited" }, [email]);
    expect(r.status).toBe("ok");
    await call("stop_session", { session_id: "audited" });
    audit.flush();
    const rows = audit.query({ sessionId: "audited", order: "asc", limit: 50 }).rows;
    const execution = rows.find((row) => row.kind === "execution");
    const toolCall = rows.find((row) => row.kind === "tool_call");
    expect(execution?.event).toMatchObject({ pii: { email: 2 } });
    expect(toolCall?.event).toMatchObject({ pii: { email: 1 } });
    const auditDir = join(dir, "audit");
    for (const file of readdirSync(auditDir)) expect(readFileSync(join(auditDir, file)).includes(email)).toBe(false);
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/sandgate_pii_tokens_total\{type="email"\} [1-9]/);
  });

  it("records a tool id the code built from tool data with a token, not the value", async () => {
    const email = "tom.pb@audit-example.com";
    const code = `r = await call_mcp_tool("everything.echo", {"message": "tom.pb" + "@audit-example.com"})\ntry:\n    await call_mcp_tool("everything.notify_" + r[6:], {})\nexcept Exception as e:\n    print(type(e).__name__)`;
    const r = await run("python", code, { session_id: "audited-id" }, [email]);
    expect(r.stdout).toBe("ToolError\n");
    await call("stop_session", { session_id: "audited-id" });
    audit.flush();
    const rows = audit.query({ sessionId: "audited-id", order: "asc", limit: 50 }).rows;
    const failed = rows.filter((row) => row.kind === "tool_call").map((row) => row.event as { tool?: string });
    // The whole id reads as a mailbox (everything.notify_tom.pb@...): one token.
    expect(failed.map((e) => e.tool)).toEqual(["everything.echo", expect.stringMatching(/^\[EMAIL_\d+\]$/)]);
    const auditDir = join(dir, "audit");
    for (const file of readdirSync(auditDir)) expect(readFileSync(join(auditDir, file)).includes(email)).toBe(false);
  });
});
