// Python: the language spec and the runner that runs it (runners/python_runner.py, a persistent
// globals dict with top-level await, spoken to in frames).

import type { LanguageSpec, RunnerSpec } from "./spec.js";

export const PYTHON_RUNNER: RunnerSpec = {
  kind: "python",
  interpreter: "python",
  files: ["python_runner.py", "sandgate_frames.py", "sandgate.py", "sandgate_ops.py", "sandgate_packages.py", "sandgate_images.py", "sandgate_mpl.py", "sandgate_notebook.py", "sandgate_ipython.py"],
  // -I: no user site or PYTHON* variables; -S: no site import (4 ms); -B: nothing written beside the runner.
  command: ({ interpreter, entry }) => [interpreter, "-I", "-S", "-B", entry],
  warmUp: "None",
  channel: "frames",
  limitAddressSpace: true,
  abortMeansOutOfMemory: false,
  interruptible: true,
};

export const PYTHON: LanguageSpec = {
  name: "python",
  title: "Python",
  aliases: ["py", "python3"],
  extensions: [".py"],
  runner: "python",
  returnsValue: true,
  filename: "main.py",
  doctorProbe: { code: "1+1", expect: 2, from: "value" },
  upstreamCall: {
    call: 'await call_mcp_tool("server.tool", {...})',
    module: "servers.<server>",
    importLine: "from servers.<server> import tool_name",
    hint: "asyncio.gather runs calls in parallel",
    search: 'await search_tools("words", detail="full", limit=3)',
    servers: "await list_servers()",
    returnContent: "return_image(result)",
  },
};
