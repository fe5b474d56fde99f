// Anthropic's sandbox-runtime (srt) wrapping `python3 -c`: the library (SandboxManager initialized once,
// each command wrapped and spawned, as Claude Code uses it) and the `srt` CLI per command. srt has no
// tool-call bridge, so the program starts the MCP server itself inside the sandbox and speaks stdio to it.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CALLS, ECHO_SERVER, PYTHON, expectTwo, lastJson, memoryAttempt, pythonProbe, run } from "./common.mjs";

const PKG = join(import.meta.dirname, "node_modules/@anthropic-ai/sandbox-runtime");

/** No network at all, writes only to a scratch directory: the tightest setting srt documents. */
const settings = (dir) => ({
  network: { allowedDomains: [], deniedDomains: [] },
  filesystem: { denyRead: [], allowWrite: [dir], denyWrite: [] },
});

/** A minimal MCP stdio client in Python: initialize, then `CALLS` echo calls, the loop timed. */
const LOOP = [
  "import json, subprocess, time",
  `p = subprocess.Popen(${JSON.stringify([ECHO_SERVER.command, ...ECHO_SERVER.args])}, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)`,
  "def send(m):",
  "    p.stdin.write((json.dumps(m) + '\\n').encode()); p.stdin.flush()",
  "def rpc(i, method, params):",
  '    send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})',
  "    while True:",
  "        m = json.loads(p.stdout.readline())",
  '        if m.get("id") == i: return m',
  'rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})',
  'send({"jsonrpc": "2.0", "method": "notifications/initialized"})',
  "t0 = time.perf_counter()",
  `for i in range(1, ${CALLS + 1}):`,
  '    r = rpc(i, "tools/call", {"name": "echo", "arguments": {"message": "hi"}})',
  "loop_ms = (time.perf_counter() - t0) * 1000",
  'assert r["result"]["content"][0]["text"] == "Echo: hi", r',
  "p.stdin.close(); p.wait()",
  'print(json.dumps({"loop_ms": loop_ms}))',
].join("\n");

const shellQuote = (s) => `'${s.replaceAll("'", "'\\''")}'`;

export async function startSrt() {
  const { SandboxManager } = await import("@anthropic-ai/sandbox-runtime");
  const version = JSON.parse(readFileSync(join(PKG, "package.json"), "utf8")).version;
  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-srt-"));
  const settingsFile = join(dir, "srt-settings.json");
  writeFileSync(settingsFile, JSON.stringify(settings(dir)));
  await SandboxManager.initialize(settings(dir));
  const python = async (code) => run(await SandboxManager.wrapWithSandbox(`${PYTHON} -c ${shellQuote(code)}`), { shell: true, cwd: dir });
  const library = {
    name: "srt, library (`wrapWithSandbox` + spawn)",
    version: `@anthropic-ai/sandbox-runtime ${version}`,
    limits: "no memory, CPU or pid limits (not an srt feature); seccomp only against Unix sockets; runs as the calling user",
    cold: async () => expectTwo(await python("print(1+1)"), "srt"),
    calls: async () => lastJson(await python(LOOP), "srt calls"),
    probe: async (ctx) => ({ ...lastJson(await python(pythonProbe(ctx)), "srt probe"), memory: await memoryAttempt(python) }),
  };
  const cli = {
    name: "srt, CLI per command",
    version: `@anthropic-ai/sandbox-runtime ${version}`,
    cold: async () => expectTwo(await run([process.execPath, join(PKG, "dist/cli.js"), "--settings", settingsFile, "-c", `${PYTHON} -c 'print(1+1)'`], { cwd: dir }), "srt cli"),
  };
  const close = async () => {
    await SandboxManager.reset();
    rmSync(dir, { recursive: true, force: true });
  };
  return { peers: [library, cli], close };
}
