// Code mode inside real sandboxes: tool calls from Python, JavaScript, TypeScript and Bash travel
// over the runner's pipes to a host handler (standing in for the router) and back.

import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { prepareJavaScript } from "../../src/languages/js-transform.js";
import type { RunnerKind } from "../../src/sandbox/runtime.js";
import type { RunOutcome, RunRequest, Sandbox, UpstreamCall, UpstreamCallReply } from "../../src/sandbox/sandbox.js";
import { transpileTypeScript } from "../../src/languages/ts-transpile.js";
import { sleep } from "../helpers.js";
import { useRawRuntime } from "../fixtures/runtime.js";

let toolsDir: string;

const MANIFEST = {
  version: 1,
  servers: {
    demo: { tsModule: "sandgate:servers/demo", pyModule: "demo", tools: { echo: "demo.echo", fail: "demo.fail" } },
    "google-drive": { tsModule: "sandgate:servers/google-drive", pyModule: "google_drive", tools: { getDocument: "google-drive.get_document" } },
  },
};

const PY_PACKAGE = `from sandgate import call_mcp_tool


async def hello(**kwargs):
    return await call_mcp_tool("demo.hello", kwargs)
`;

const raw = useRawRuntime("tools-test", (dir) => {
  toolsDir = join(dir, "tools");
  mkdirSync(join(toolsDir, "python", "servers", "demo"), { recursive: true, mode: 0o755 });
  writeFileSync(join(toolsDir, "python", "servers", "__init__.py"), "");
  writeFileSync(join(toolsDir, "python", "servers", "demo", "__init__.py"), PY_PACKAGE);
  writeFileSync(join(toolsDir, "manifest.json"), JSON.stringify(MANIFEST));
  return { toolsDir };
});

interface Recorder {
  calls: UpstreamCall[];
  signals: AbortSignal[];
  handler: (call: UpstreamCall, signal: AbortSignal) => Promise<UpstreamCallReply>;
}

/** Echoes the arguments back; "x.fail" fails, "x.slow" waits `args.ms` (default 50 ms) first. */
function recorder(): Recorder {
  const rec: Recorder = {
    calls: [],
    signals: [],
    handler: async (call, signal) => {
      rec.calls.push(call);
      rec.signals.push(signal);
      if (call.tool.endsWith(".fail")) return { ok: false, error: { type: "ToolError", message: "upstream said no" } };
      if (call.tool.endsWith(".slow")) {
        const ms = (call.args as { ms?: number }).ms ?? 50;
        await sleep(ms);
      }
      return { ok: true, value: { tool: call.tool, args: call.args } };
    },
  };
  return rec;
}

async function withSandbox<T>(kind: RunnerKind, body: (sandbox: Sandbox) => Promise<T>): Promise<T> {
  const sandbox = await raw.start(kind);
  try {
    return await body(sandbox);
  } finally {
    await sandbox.dispose();
  }
}

function run(sandbox: Sandbox, code: string, extra: Partial<RunRequest> = {}): Promise<RunOutcome> {
  const filename = { python: "main.py", javascript: "main.js", bash: "main.sh" }[sandbox.kind];
  let mode: "script" | "async" | undefined;
  if (sandbox.kind === "javascript") {
    const prepared = prepareJavaScript(code);
    code = prepared.code;
    mode = prepared.mode;
  }
  return sandbox.run({ code, filename, timeoutMs: 20_000, outputCapBytes: 1 << 20, ...(mode ? { mode } : {}), ...extra });
}

function text(outcome: RunOutcome): { stdout: string; stderr: string } {
  return { stdout: outcome.stdout.toString("utf8"), stderr: outcome.stderr.toString("utf8") };
}

describe("python", () => {
  it("calls a tool from top-level await, with the tools injected and importable", async () => {
    const rec = recorder();
    await withSandbox("python", async (sandbox) => {
      const r = await run(sandbox, "import sandgate\nassert sandgate.call_mcp_tool is call_mcp_tool\nawait call_mcp_tool('x.echo', {'a': 1})", {
        onUpstreamCall: rec.handler,
      });
      expect(r.result?.error).toBeUndefined();
      expect(r.result?.value).toEqual({ tool: "x.echo", args: { a: 1 } });
      const noArgs = await run(sandbox, "await call_mcp_tool('x.echo')", { onUpstreamCall: rec.handler });
      expect(noArgs.result?.value).toEqual({ tool: "x.echo", args: {} });
    });
  });

  it("runs 20 calls in parallel with asyncio.gather, replies arriving out of order", async () => {
    const rec = recorder();
    await withSandbox("python", async (sandbox) => {
      const code = [
        "import asyncio",
        "results = await asyncio.gather(*(call_mcp_tool('x.slow', {'i': i, 'ms': (20 - i) * 5}) for i in range(20)))",
        "[r['args']['i'] for r in results]",
      ].join("\n");
      const r = await run(sandbox, code, { onUpstreamCall: rec.handler });
      expect(r.result?.value).toEqual([...Array(20).keys()]);
      expect(rec.calls).toHaveLength(20);
    });
  });

  it("works from code that runs its own asyncio.run(main())", async () => {
    const rec = recorder();
    await withSandbox("python", async (sandbox) => {
      const code = [
        "import asyncio",
        "async def main():",
        "    a, b = await asyncio.gather(call_mcp_tool('x.slow', {'n': 1}), call_mcp_tool('x.echo', {'n': 2}))",
        "    return a['args']['n'] + b['args']['n']",
        "asyncio.run(main())",
      ].join("\n");
      const r = await run(sandbox, code, { onUpstreamCall: rec.handler });
      expect(r.result?.value).toBe(3);
    });
  });

  it("raises ToolError with the tool name and message, catchable", async () => {
    const rec = recorder();
    await withSandbox("python", async (sandbox) => {
      const code = [
        "try:",
        "    await call_mcp_tool('x.fail', {})",
        "except ToolError as e:",
        "    caught = [e.tool, e.message, e.kind, str(e)]",
        "caught",
      ].join("\n");
      const r = await run(sandbox, code, { onUpstreamCall: rec.handler });
      expect(r.result?.value).toEqual(["x.fail", "upstream said no", "ToolError", "tool `x.fail` failed: upstream said no"]);
      const uncaught = await run(sandbox, "x = 1\nawait call_mcp_tool('x.fail')", { onUpstreamCall: rec.handler });
      expect(uncaught.status).toBe("error");
      expect(uncaught.result?.error?.type).toBe("ToolError");
      expect(uncaught.result?.error?.message).toBe("tool `x.fail` failed: upstream said no");
      expect(uncaught.result?.error?.traceback).toContain('main.py", line 2');
    });
  });

  it("imports a generated wrapper package from the tools directory", async () => {
    const rec = recorder();
    await withSandbox("python", async (sandbox) => {
      const r = await run(sandbox, "from servers.demo import hello\nawait hello(name='ada')", { onUpstreamCall: rec.handler });
      expect(r.result?.error).toBeUndefined();
      expect(r.result?.value).toEqual({ tool: "demo.hello", args: { name: "ada" } });
    });
  });

  it("without handlers (a bare sandbox) fails every call clearly, tool calls and sandgate's operations alike", async () => {
    await withSandbox("python", async (sandbox) => {
      const r = await run(sandbox, "await call_mcp_tool('x.echo')");
      expect(r.result?.error?.message).toBe("tool `x.echo` failed: no upstream MCP servers are configured here, so there are no tools to call (list them under mcpServers in sandgate.json)");
      const found = await run(sandbox, "await search_tools('create issue')");
      expect(found.result?.error).toMatchObject({
        type: "ToolError",
        message: "tool `search_tools` failed: operation codemode.search is not served to this sandbox (an engine built without sandgate's operations)",
      });
    });
  });
});

describe("javascript and typescript", () => {
  it("calls tools with callMCPTool, in parallel with Promise.all, and rejects with ToolError", async () => {
    const rec = recorder();
    await withSandbox("javascript", async (sandbox) => {
      const one = await run(sandbox, "await callMCPTool('x.echo', { a: 1 })", { onUpstreamCall: rec.handler });
      expect(one.result?.value).toEqual({ tool: "x.echo", args: { a: 1 } });
      const code = "const rs = await Promise.all([...Array(20).keys()].map((i) => callMCPTool('x.slow', { i, ms: (20 - i) * 5 })));\nrs.map((r) => r.args.i)";
      const many = await run(sandbox, code, { onUpstreamCall: rec.handler });
      expect(many.result?.value).toEqual([...Array(20).keys()]);
      const failing = [
        "let caught;",
        "try { await callMCPTool('x.fail', {}); } catch (e) { caught = [e instanceof ToolError, e.name, e.tool, e.kind, e.message]; }",
        "caught",
      ].join("\n");
      const failed = await run(sandbox, failing, { onUpstreamCall: rec.handler });
      expect(failed.result?.value).toEqual([true, "ToolError", "x.fail", "ToolError", "tool `x.fail` failed: upstream said no"]);
      const uncaught = await run(sandbox, "const a = 1;\nawait callMCPTool('x.fail');", { onUpstreamCall: rec.handler });
      expect(uncaught.result?.error?.type).toBe("ToolError");
      expect(uncaught.result?.error?.traceback).toContain("main.js:2");
    });
  });

  it("imports sandgate:servers modules statically, dynamically and with require, and offers `servers`", async () => {
    const rec = recorder();
    await withSandbox("javascript", async (sandbox) => {
      const code = [
        'import { echo } from "sandgate:servers/demo";',
        'import drive from "sandgate:servers/google-drive";',
        'import fs from "fs";',
        'import * as path from "node:path";',
        "const viaImport = await echo({ n: 1 });",
        "const viaDefault = await drive.getDocument({ documentId: 'abc' });",
        "const viaGlobal = await servers.googleDrive.getDocument({ n: 3 });",
        "const viaDash = await servers['google-drive'].getDocument({ n: 4 });",
        "const viaRequire = await require('sandgate:servers/demo').echo({ n: 5 });",
        "const viaDynamic = await (await import('sandgate:servers/demo')).echo({ n: 6 });",
        "[viaImport.tool, viaDefault.tool, viaDefault.args, viaGlobal.args.n, viaDash.args.n, viaRequire.args.n, viaDynamic.args.n,",
        " typeof fs.readFileSync, path.join('a', 'b'), Object.keys(servers)]",
      ].join("\n");
      const r = await run(sandbox, code, { onUpstreamCall: rec.handler });
      expect(r.result?.error).toBeUndefined();
      expect(r.result?.value).toEqual([
        "demo.echo",
        "google-drive.get_document",
        { documentId: "abc" },
        3,
        4,
        5,
        6,
        "function",
        "a/b",
        ["demo", "google-drive"],
      ]);
      // Names imported stay defined for the next call, like other top-level declarations.
      const later = await run(sandbox, "(await echo({ again: true })).args", { onUpstreamCall: rec.handler });
      expect(later.result?.value).toEqual({ again: true });
    });
  });

  it("names the known servers and tools when one is misspelt, and sees a replaced manifest", async () => {
    await withSandbox("javascript", async (sandbox) => {
      const unknown = await run(sandbox, 'import { x } from "sandgate:servers/nope";');
      expect(unknown.result?.error?.message).toBe('no tool server "nope"; the servers are: demo, google-drive');
      const badTool = await run(sandbox, "servers.demo.ech");
      expect(badTool.result?.error?.message).toBe('server "demo" has no tool "ech"; its tools are: echo, fail');
      const next = { version: 1, servers: { ...MANIFEST.servers, extra: { tsModule: "sandgate:servers/extra", pyModule: "extra", tools: { go: "extra.go" } } } };
      writeFileSync(join(toolsDir, "manifest.json.tmp"), JSON.stringify(next));
      renameSync(join(toolsDir, "manifest.json.tmp"), join(toolsDir, "manifest.json"));
      try {
        const seen = await run(sandbox, "Object.keys(servers)");
        expect(seen.result?.value).toEqual(["demo", "google-drive", "extra"]);
      } finally {
        writeFileSync(join(toolsDir, "manifest.json"), JSON.stringify(MANIFEST));
      }
    });
  });

  it("runs TypeScript with type-only and value imports", async () => {
    const rec = recorder();
    const ts = [
      'import type { Readable } from "node:stream";',
      'import { type Stats, readFileSync } from "node:fs";',
      'import { echo } from "sandgate:servers/demo";',
      "interface Reply { tool: string; args: { n: number } }",
      "let s: Stats | Readable | undefined;",
      "const r = (await echo({ n: 7 })) as Reply;",
      "[r.tool, r.args.n, typeof readFileSync, s === undefined]",
    ].join("\n");
    await withSandbox("javascript", async (sandbox) => {
      const r = await run(sandbox, transpileTypeScript(ts), { onUpstreamCall: rec.handler, filename: "main.ts" });
      expect(r.result?.error).toBeUndefined();
      expect(r.result?.value).toEqual(["demo.echo", 7, "function", true]);
    });
  });
});

describe("bash", () => {
  it("prints the JSON result for a pipeline, and fails with status 1 and the message", async () => {
    const rec = recorder();
    await withSandbox("bash", async (sandbox) => {
      const ok = await run(sandbox, `sandgate-tool x echo '{"a":1}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["args"]["a"])'`, {
        onUpstreamCall: rec.handler,
      });
      expect(text(ok)).toEqual({ stdout: "1\n", stderr: "" });
      expect(rec.calls[0]).toEqual({ tool: "x.echo", args: { a: 1 } });
      const raw = await run(sandbox, `sandgate-tool x echo; echo '{"b":[2]}' | sandgate-tool x echo -`, { onUpstreamCall: rec.handler });
      expect(text(raw).stdout).toBe('{"tool":"x.echo","args":{}}\n{"tool":"x.echo","args":{"b":[2]}}\n');
      const failed = await run(sandbox, "sandgate-tool x fail; echo status=$?", { onUpstreamCall: rec.handler });
      expect(text(failed)).toEqual({ stdout: "status=1\n", stderr: "sandgate-tool: tool `x.fail` failed: upstream said no\n" });
      const usage = await run(sandbox, "sandgate-tool onlyone 2>/dev/null; echo status=$?", { onUpstreamCall: rec.handler });
      expect(text(usage).stdout).toBe("status=2\n");
      const badJson = await run(sandbox, "sandgate-tool x echo '{nope'; echo status=$?", { onUpstreamCall: rec.handler });
      expect(text(badJson).stdout).toBe("status=1\n");
      expect(text(badJson).stderr).toMatch(/^sandgate-tool: tool `x.echo` failed: the arguments are not valid JSON \(/);
      const notObject = await run(sandbox, "sandgate-tool x echo '[1]'; echo status=$?", { onUpstreamCall: rec.handler });
      expect(text(notObject)).toEqual({ stdout: "status=1\n", stderr: "sandgate-tool: tool `x.echo` failed: the arguments must be a JSON object\n" });
      const badContent = await run(sandbox, "echo '{nope' | sandgate-tool --return; echo status=$?", { onUpstreamCall: rec.handler });
      expect(text(badContent).stdout).toBe("status=2\n");
      expect(text(badContent).stderr).toMatch(/^sandgate-tool: --return failed: the content is not valid JSON \(/);
    });
  });

  it("keeps the replies of concurrent background calls apart", async () => {
    const rec = recorder();
    await withSandbox("bash", async (sandbox) => {
      const code = [
        "for i in 1 2 3 4 5; do",
        `  ( sandgate-tool x slow "{\\"i\\":$i,\\"ms\\":$(( (6 - i) * 40 ))}" > /tmp/out.$i ) &`,
        "done",
        "wait",
        "for i in 1 2 3 4 5; do cat /tmp/out.$i; done",
      ].join("\n");
      const r = await run(sandbox, code, { onUpstreamCall: rec.handler });
      const lines = text(r).stdout.trim().split("\n").map((line) => JSON.parse(line) as { args: { i: number } });
      expect(lines.map((line) => line.args.i)).toEqual([1, 2, 3, 4, 5]);
      expect(text(r).stderr).toBe("");
    });
  });
});

describe("the host side", () => {
  it("answers malformed requests with an error and keeps the sandbox alive", async () => {
    const rec = recorder();
    await withSandbox("python", async (sandbox) => {
      const code = [
        "import os, sandgate_frames as f",
        "def raw(obj):",
        "    data = f.dumps(obj).encode()",
        "    os.write(4, len(data).to_bytes(4, 'big') + data)",
        "raw({'type': 'tool_call', 'callId': 7, 'tool': 'x.echo'})",  // no usable callId: dropped
        "raw({'type': 'tool_call', 'tool': 'x.echo'})",
        "errors = []",
        "for tool, args in [('x.echo', [1, 2]), (42, {}), ('t' * 600, {}), ('x.echo', 'str')]:",
        "    try:",
        "        await sandgate._channel.call(tool, args)",
        "    except ToolError as e:",
        "        errors.append(e.kind)",
        "errors",
      ].join("\n");
      const r = await run(sandbox, `import sandgate\n${code}`, { onUpstreamCall: rec.handler });
      expect(r.result?.error).toBeUndefined();
      expect(r.result?.value).toEqual(["InvalidArguments", "InvalidArguments", "InvalidArguments", "InvalidArguments"]);
      expect(rec.calls).toHaveLength(0);
      const after = await run(sandbox, "(await call_mcp_tool('x.echo', {'ok': True}))['args']", { onUpstreamCall: rec.handler });
      expect(after.result?.value).toEqual({ ok: true });
    });
  });

  it("aborts the signal of calls in flight when the run times out", async () => {
    const rec = recorder();
    await withSandbox("javascript", async (sandbox) => {
      const r = await run(sandbox, "await Promise.all([callMCPTool('x.slow', { ms: 5000 }), callMCPTool('x.slow', { ms: 5000 })])", {
        onUpstreamCall: rec.handler,
        timeoutMs: 1000,
      });
      expect(r.status).toBe("timeout");
      expect(rec.signals).toHaveLength(2);
      expect(rec.signals.every((signal) => signal.aborted)).toBe(true);
    });
  });

  it("answers 1,000 sequential calls each with its own reply (timing is in npm run bench)", async () => {
    const handler = (call: UpstreamCall): Promise<UpstreamCallReply> => Promise.resolve({ ok: true, value: call.args });
    await withSandbox("python", async (sandbox) => {
      const code = "bad = 0\nfor i in range(1000):\n    r = await call_mcp_tool('x.echo', {'i': i})\n    bad += r != {'i': i}\nbad";
      const r = await run(sandbox, code, { onUpstreamCall: handler });
      expect(r.result?.value).toBe(0);
    });
    await withSandbox("javascript", async (sandbox) => {
      const code = "let bad = 0;\nfor (let i = 0; i < 1000; i++) { const r = await callMCPTool('x.echo', { i }); if (r.i !== i) bad++; }\nbad";
      const r = await run(sandbox, code, { onUpstreamCall: handler });
      expect(r.result?.value).toBe(0);
    });
  });
});
