// Pyodide in Node (the engine of pydantic's mcp-run-python): a fresh loadPyodide per cold run, one kept
// instance for warm runs, and tool calls from Python into a JS function that calls the MCP server via the SDK.

import { CALLS, connectEcho, echoText, expectTwo, lastJson, memoryAttempt, pythonProbe } from "./common.mjs";

const LOOP = [
  "import json, time",
  "t0 = time.perf_counter()",
  `for _ in range(${CALLS}):`,
  '    r = await call_tool("echo", {"message": "hi"})',
  "loop_ms = (time.perf_counter() - t0) * 1000",
  'assert r == "Echo: hi", r',
  'print(json.dumps({"loop_ms": loop_ms}))',
].join("\n");

/** Runs `code` in `py`, returns what it printed. */
async function runPrinting(py, code) {
  let out = "";
  py.setStdout({ batched: (s) => (out += `${s}\n`) });
  await py.runPythonAsync(code);
  return out;
}

export async function startPyodide() {
  const { loadPyodide, version } = await import("pyodide");
  const upstream = await connectEcho("bench-peers-pyodide");
  let warm;
  try {
    warm = await loadPyodide();
  } catch (e) {
    await upstream.close();
    throw e;
  }
  warm.globals.set("call_tool", async (name, args) => {
    const plain = args.toJs({ dict_converter: Object.fromEntries });
    return echoText(await upstream.callTool({ name, arguments: plain }));
  });
  const peer = {
    name: "Pyodide in Node (fresh `loadPyodide` per cold run)",
    version: `pyodide ${version}`,
    limits: "none but the wasm heap; shares the host process, whose JS it can call",
    coldPerRound: 1,
    cold: async () => expectTwo(await runPrinting(await loadPyodide(), "print(1+1)"), "pyodide"),
    warm: async () => expectTwo(await runPrinting(warm, "print(1+1)"), "pyodide warm"),
    calls: async () => lastJson(await runPrinting(warm, LOOP), "pyodide calls"),
    probe: async (ctx) => {
      const py = await loadPyodide();
      const plain = { ...lastJson(await runPrinting(py, pythonProbe(ctx)), "pyodide probe"), memory: await memoryAttempt((code) => runPrinting(py, code)) };
      // What the Python code can reach through the JS bridge, which Pyodide in Node leaves open.
      const bridge = lastJson(await runPrinting(py, BRIDGE_PROBE), "pyodide bridge probe");
      return Object.fromEntries(Object.entries(plain).map(([k, v]) => [k, bridge[k] ? `${v}; via \`run_js\`: ${bridge[k]}` : v]));
    },
  };
  return { peers: [peer], close: () => upstream.close() };
}

const BRIDGE_PROBE = [
  "import json",
  "from pyodide.code import run_js",
  "out = {}",
  "def attempt(key, js):",
  "    try:",
  "        out[key] = str(run_js(js))",
  "    except BaseException as e:",
  '        out[key] = "blocked: " + type(e).__name__',
  `attempt("file", "'read ' + process.getBuiltinModule('fs').readFileSync('/etc/shadow', 'utf8').length + ' bytes'")`,
  `attempt("procs", "'ran id: ' + process.getBuiltinModule('child_process').execFileSync('id').toString().trim()")`,
  "print(json.dumps(out))",
].join("\n");
