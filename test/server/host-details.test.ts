// Host details a sandbox must not learn, read from inside real sandboxes: host paths in /proc,
// sandgate's own frames in tracebacks; and deeply nested code, which is the code's syntax error.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { prepareCode } from "../../src/languages/index.js";
import type { RunOutcome, UpstreamCallHandler } from "../../src/sandbox/sandbox.js";
import { useRawRuntime } from "../fixtures/runtime.js";

let volumeDir: string;
const raw = useRawRuntime("host-details", (dir) => {
  volumeDir = join(dir, "volume-data");
  mkdirSync(volumeDir, { mode: 0o755 });
  return { volumes: [{ name: "data", hostPath: volumeDir, readOnly: false }] };
});

const failingTools: UpstreamCallHandler = async (call) =>
  call.tool === "x.fail" ? { ok: false, error: { type: "ToolError", message: "upstream said no" } } : { ok: true, value: 1 };

/** Prepares `code` as the engine does and runs it in a fresh sandbox with a failing tool. */
async function runCode(language: "python" | "javascript" | "typescript", code: string, workspaceDir?: string): Promise<RunOutcome> {
  const prepared = prepareCode(language, code);
  if (!prepared.ok) throw new Error(`prepareCode refused: ${prepared.error.message}`);
  const { kind, filename, mode } = prepared.prepared;
  const sandbox = await raw.start(kind, workspaceDir ? { workspaceDir } : {});
  return sandbox.run({ code: prepared.prepared.code, filename, ...(mode ? { mode } : {}), timeoutMs: 20_000, outputCapBytes: 1 << 20, onUpstreamCall: failingTools });
}

describe("/proc inside a sandbox", () => {
  it("shows no host path of the sandbox directory, the session workspace, a volume or the server's working directory in any cmdline or environ", async () => {
    const workspaceDir = raw.workspace("session-with-a-name");
    const code = [
      "import os",
      "seen = {}",
      "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:",
      "    for name in ('cmdline', 'environ'):",
      "        try:",
      "            with open(f'/proc/{pid}/{name}', 'rb') as f:",
      "                seen[f'{pid}/{name}'] = f.read().decode('utf-8', 'replace')",
      "        except OSError as exc:",
      "            seen[f'{pid}/{name}'] = f'unreadable: {exc.strerror}'",
      "seen",
    ].join("\n");
    const outcome = await runCode("python", code, workspaceDir);
    expect(outcome.status).toBe("ok");
    const seen = outcome.result?.value as Record<string, string>;
    expect(Object.keys(seen)).toContain("1/cmdline");
    expect(seen["1/cmdline"]).toMatch(/bwrap/);
    for (const [where, text] of Object.entries(seen)) {
      for (const hostPath of [raw.dir, workspaceDir, volumeDir, raw.runtime.runnersDir, raw.runtime.etcDir, process.cwd()]) {
        expect(text.includes(hostPath), `${where} shows ${hostPath}`).toBe(false);
      }
    }
  });
});

describe("tracebacks", () => {
  const noRunnerFrames = (outcome: RunOutcome): void => {
    const all = `${outcome.result?.error?.traceback ?? ""}\n${outcome.stderr.toString()}`;
    expect(all).not.toMatch(/\/sandgate\/runners|python_runner|node_runner|node_code_mode|sandgate\.py/);
  };

  it("of a failed Python tool call, raised on or chained, show the user's lines and no runner frame", async () => {
    const direct = await runCode("python", "async def fetch():\n    return await call_mcp_tool('x.fail')\nawait fetch()");
    expect(direct.result?.error?.type).toBe("ToolError");
    expect(direct.result?.error?.traceback).toMatch(/File "main\.py", line 2, in fetch/);
    noRunnerFrames(direct);
    const chained = await runCode("python", "try:\n    await call_mcp_tool('x.fail')\nexcept Exception as e:\n    raise RuntimeError('wrapped') from e");
    expect(chained.result?.error?.traceback).toMatch(/direct cause[\s\S]*line 4/);
    noRunnerFrames(chained);
  });

  it("printed by Python for threads, tasks nobody awaited and coroutines never awaited name only the user's file and libraries", async () => {
    const thread = await runCode("python", "import threading, asyncio\ndef work():\n    asyncio.run(call_mcp_tool('x.fail'))\nt = threading.Thread(target=work)\nt.start()\nt.join()");
    expect(thread.stderr.toString()).toMatch(/Exception in thread[\s\S]*main\.py", line 3, in work[\s\S]*ToolError/);
    noRunnerFrames(thread);
    const task = await runCode("python", "import asyncio\nasyncio.ensure_future(call_mcp_tool('x.fail'))\nawait asyncio.sleep(0.2)");
    expect(task.stderr.toString()).toMatch(/never retrieved/);
    noRunnerFrames(task);
    const ownLoop = await runCode(
      "python",
      "import asyncio, gc\nasync def main():\n    asyncio.ensure_future(call_mcp_tool('x.fail'))\n    await asyncio.sleep(0.2)\nasyncio.run(main())\ngc.collect()",
    );
    expect(ownLoop.stderr.toString()).toMatch(/never retrieved[\s\S]*ToolError/);
    noRunnerFrames(ownLoop);
    const coroutine = await runCode("python", "x = 1\ncall_mcp_tool('x.fail')");
    expect(coroutine.stderr.toString()).toMatch(/^main\.py:2: RuntimeWarning: coroutine 'call_mcp_tool' was never awaited/);
    noRunnerFrames(coroutine);
  });

  it("of JavaScript and TypeScript errors raised in code mode show no runner frame or source line", async () => {
    for (const code of ["callMCPTool(3)", "require('sandgate:servers/nope')", "servers.nope.x()", "await callMCPTool('x.fail')"]) {
      const outcome = await runCode("javascript", code);
      expect(outcome.status, code).toBe("error");
      expect(outcome.result?.error?.traceback, code).toMatch(/at .*main\.js:1:\d+/);
      noRunnerFrames(outcome);
    }
    const rejected = await runCode("javascript", "callMCPTool('x.fail');\nawait new Promise((r) => setTimeout(r, 200)); 1");
    expect(rejected.stderr.toString()).toMatch(/Uncaught ToolError/);
    noRunnerFrames(rejected);
    const ts = await runCode("typescript", "async function f(): Promise<void> {\n  await callMCPTool(3 as unknown as string);\n}\nawait f();");
    expect(ts.result?.error?.traceback).toMatch(/main\.ts:2/);
    noRunnerFrames(ts);
  });
});

describe("deeply nested code", () => {
  const deep = ["(".repeat(100_000), `const a = ${"[".repeat(5000)}${"]".repeat(5000)};`, `let v = ${"(".repeat(100_000)}1${")".repeat(100_000)};`];

  it("is a TypeScript syntax error result saying it is too deeply nested, not a crash of the host", () => {
    for (const code of deep) {
      const prepared = prepareCode("typescript", code);
      expect(prepared.ok).toBe(false);
      if (prepared.ok) continue;
      expect(prepared.error.type).toBe("SyntaxError");
      expect(prepared.error.message).toMatch(/nested too deeply/);
      expect(prepared.error.traceback.length).toBeLessThan(2000);
    }
  });

  it("is a JavaScript syntax error result too, whether the host's parser or V8 meets it first", async () => {
    for (const code of deep) {
      const prepared = prepareCode("javascript", code);
      if (!prepared.ok) {
        expect(prepared.error.type).toBe("SyntaxError");
        expect(prepared.error.message).toMatch(/nested too deeply/);
        continue;
      }
      const outcome = await runCode("javascript", code);
      expect(outcome.status).toBe("error");
      expect(outcome.result?.error?.type).toBe("SyntaxError");
      expect(outcome.result?.error?.message).toMatch(/nested too deeply/);
    }
  });
});
