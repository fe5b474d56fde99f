// JavaScript: the language spec (a host-side rewrite for top-level await and static import) and
// the Node runner (runners/node_runner.cjs) that also runs TypeScript after its transpile.

import { prepareJavaScript } from "./js-transform.js";
import type { LanguageSpec, RunnerSpec } from "./spec.js";

export const JAVASCRIPT_RUNNER: RunnerSpec = {
  kind: "javascript",
  interpreter: "node",
  files: ["node_runner.cjs", "node_code_mode.cjs", "node_ops.cjs", "node_images.cjs"],
  command: ({ interpreter, entry, memoryMb }) => [
    interpreter,
    // V8 sizes its heap from the host's RAM; tell it the sandbox's real budget so it collects in time.
    `--max-old-space-size=${Math.max(16, Math.floor(memoryMb * 0.75))}`,
    entry,
  ],
  warmUp: "undefined",
  channel: "frames",
  // V8 reserves far more address space than it uses; the heap flag above is Node's bound.
  limitAddressSpace: false,
  abortMeansOutOfMemory: true,
  interruptible: true,
};

export const JAVASCRIPT: LanguageSpec = {
  name: "javascript",
  title: "JavaScript",
  aliases: ["js", "node", "nodejs"],
  extensions: [".js", ".mjs", ".cjs"],
  runner: "javascript",
  returnsValue: true,
  filename: "main.js",
  prepare: prepareJavaScript,
  doctorProbe: { code: "1+1", expect: 2, from: "value" },
  upstreamCall: {
    call: 'await callMCPTool("server.tool", {...})',
    module: "sandgate:servers/<server>",
    importLine: 'import { toolName } from "sandgate:servers/<server>"',
    search: 'await searchTools("words", { detail: "full", limit: 3 })',
    servers: "await listServers()",
    returnContent: "returnImage(result)",
  },
};
