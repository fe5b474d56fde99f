// sandgate-tool from programs that close the fds they inherit (Python's subprocess, Node's execFileSync, a shell
// that closes them): it opens the sandbox's tool FIFOs by path. Only its own sandbox reaches them.

import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { RunOutcome, RunRequest, Sandbox, UpstreamCall, UpstreamCallReply } from "../../src/sandbox/sandbox.js";
import { prepareJavaScript } from "../../src/languages/js-transform.js";
import { useRawRuntime } from "../fixtures/runtime.js";
import { startCodeModeStack } from "../fixtures/code-mode-stack.js";
import { callTool } from "../fixtures/mcp-client.js";
import { waitFor } from "../helpers.js";

const raw = useRawRuntime("tool-fifos");

/** Echoes each call back, naming the sandbox that answered it. */
function handler(label: string, calls: UpstreamCall[]): (call: UpstreamCall) => Promise<UpstreamCallReply> {
  return async (call) => {
    calls.push(call);
    return { ok: true, value: { sandbox: label, tool: call.tool, args: call.args } };
  };
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

const out = (r: RunOutcome): string => r.stdout.toString("utf8");
const err = (r: RunOutcome): string => r.stderr.toString("utf8");

describe("sandgate-tool without inherited fds", () => {
  it("works from Python's subprocess (close_fds) in a Python sandbox, also concurrently", async () => {
    const sandbox = await raw.start("python");
    const calls: UpstreamCall[] = [];
    const code = [
      "import json, subprocess",
      "from concurrent.futures import ThreadPoolExecutor",
      'r = subprocess.run(["sandgate-tool", "everything", "echo", \'{"message":"x"}\'], capture_output=True, text=True)',
      "print(r.returncode, r.stdout.strip(), r.stderr.strip())",
      'one = lambda i: json.loads(subprocess.run(["sandgate-tool", "s", "t", json.dumps({"i": i})], capture_output=True, text=True, check=True).stdout)["args"]["i"]',
      "with ThreadPoolExecutor(8) as pool: print(sorted(pool.map(one, range(16))))",
    ].join("\n");
    const r = await run(sandbox, code, { onUpstreamCall: handler("a", calls) });
    expect(err(r)).toBe("");
    const lines = out(r).trim().split("\n");
    expect(lines[0]).toBe('0 {"sandbox":"a","tool":"everything.echo","args":{"message":"x"}} ');
    expect(lines[1]).toBe(`[${Array.from({ length: 16 }, (_, i) => i).join(", ")}]`);
    expect(calls).toHaveLength(17);
  });

  it("works from Node's execFileSync in a JavaScript sandbox", async () => {
    const sandbox = await raw.start("javascript");
    const calls: UpstreamCall[] = [];
    const code = 'const cp = require("node:child_process");\nconsole.log(cp.execFileSync("sandgate-tool", ["everything", "echo", \'{"message":"n"}\']).toString().trim())';
    const r = await run(sandbox, code, { onUpstreamCall: handler("js", calls) });
    expect(err(r)).toBe("");
    expect(out(r).trim()).toBe('{"sandbox":"js","tool":"everything.echo","args":{"message":"n"}}');
  });

  it("works in Bash from a shell that closed the inherited tool fds, from Python's subprocess, and in parallel", async () => {
    const sandbox = await raw.start("bash");
    const calls: UpstreamCall[] = [];
    const code = [
      // A child shell that closes every fd above 2 before calling.
      'bash -c \'for f in /proc/$$/fd/*; do n=${f##*/}; ((n > 2)) && eval "exec $n>&-"; done; exec 3>&-; sandgate-tool s closed "{\\"k\\":1}"\'',
      "python3 -c 'import subprocess; print(subprocess.run([\"sandgate-tool\", \"s\", \"py\"], capture_output=True, text=True).stdout.strip())'",
      'for i in 1 2 3 4 5 6; do ( python3 -c "import subprocess,sys; subprocess.run([\'sandgate-tool\', \'s\', \'par\', \'{\\"i\\":$i}\'], stdout=open(\'/tmp/o.$i\', \'w\'))" ) & done; wait',
      "cat /tmp/o.1 /tmp/o.2 /tmp/o.3 /tmp/o.4 /tmp/o.5 /tmp/o.6 | wc -l",
    ].join("\n");
    const r = await run(sandbox, code, { onUpstreamCall: handler("b", calls) });
    expect(err(r)).toBe("");
    expect(out(r).split("\n").slice(0, 3)).toEqual(['{"sandbox":"b","tool":"s.closed","args":{"k":1}}', '{"sandbox":"b","tool":"s.py","args":{}}', "6"]);
    expect(calls.filter((c) => c.tool === "s.par").map((c) => (c.args as { i: number }).i).sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("reaches only its own sandbox: the FIFOs are read-only binds that another sandbox cannot see or open", async () => {
    const a = await raw.start("bash");
    const b = await raw.start("bash");
    const callsA: UpstreamCall[] = [];
    const callsB: UpstreamCall[] = [];
    // What the FIFOs are inside a sandbox, and that the sandbox can neither chmod nor replace them.
    const probe = await run(a, "stat -c '%F %a' /sandgate/channel/tool-requests; chmod 666 /sandgate/channel/tool-requests 2>/dev/null || echo no-chmod; rm -f /sandgate/channel/tool-replies 2>/dev/null || echo no-rm", {
      onUpstreamCall: handler("a", callsA),
    });
    expect(out(probe)).toBe("fifo 600\nno-chmod\nno-rm\n");
    // No path in B leads to A's FIFOs: B's calls reach B's handler only.
    const fromB = await run(b, "sandgate-tool s who", { onUpstreamCall: handler("b", callsB) });
    expect(out(fromB).split("\n")[0]).toBe('{"sandbox":"b","tool":"s.who","args":{}}');
    const fromA = await run(a, "sandgate-tool s who", { onUpstreamCall: handler("a", callsA) });
    expect(out(fromA)).toBe('{"sandbox":"a","tool":"s.who","args":{}}\n');
    expect(callsA.map((c) => c.tool)).toEqual(["s.who"]);
    expect(callsB.map((c) => c.tool)).toEqual(["s.who"]);
  });

  it("removes a sandbox's FIFOs when the sandbox is disposed", async () => {
    const channels = join(dirname(raw.runtime.etcDir), "channels");
    const sandbox = await raw.start("bash");
    // The sandbox's own pair, by the directory its mount came from (pairs made ahead sit beside it).
    const mounts = await sandbox.run({ code: "grep -o 'tool-[A-Za-z0-9]*/requests' /proc/self/mountinfo", filename: "main.sh", timeoutMs: 10_000, outputCapBytes: 1 << 16 });
    const own = mounts.stdout.toString().trim().split("/")[0] ?? "";
    expect(own).toMatch(/^tool-/);
    expect(readdirSync(channels)).toContain(own);
    await sandbox.dispose();
    expect(await waitFor(() => !readdirSync(channels).includes(own))).toBe(true);
  });
});

describe("sandgate-tool from a Python program through the whole server", () => {
  it("reaches the real upstream server and counts as one of the execution's tool calls", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-fifo-stack-"));
    chmodSync(dir, 0o755);
    const everything = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));
    const stack = await startCodeModeStack(dir, {
      servers: { everything: { command: process.execPath, args: [everything, "stdio"] } },
      pool: { python: 0, javascript: 0, bash: 0 },
      name: "fifo-stack-test",
    });
    try {
      const code = 'import subprocess\nr = subprocess.run(["sandgate-tool", "everything", "echo", \'{"message":"x"}\'], capture_output=True, text=True)\nprint(r.returncode, r.stdout.strip())';
      const result = (await callTool(stack.client, "execute_code", { language: "python", code })).structuredContent as { status: string; stdout: string; stderr: string; tool_calls: { tool: string; ok: boolean }[] };
      expect(result.status, result.stderr).toBe("ok");
      expect(result.stdout.trim()).toBe('0 "Echo: x"');
      expect(result.tool_calls).toEqual([expect.objectContaining({ tool: "everything.echo", ok: true })]);
    } finally {
      await stack.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
