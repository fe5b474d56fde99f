// V8 isolates (isolated-vm) in the side-by-side benchmark: the UTCP code-mode library, whose tool calls
// go through UTCP's MCP call template to server-everything, and a bare isolated-vm isolate as a floor.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CALLS, ECHO_SERVER, expectTwo, jsProbe } from "./common.mjs";

const versionOf = (pkg) => JSON.parse(readFileSync(join(import.meta.dirname, "node_modules", pkg, "package.json"), "utf8")).version;

/** UTCP logs every call with console.log; the bench measures the sandbox, not a terminal. */
async function quiet(fn) {
  const saved = [console.log, console.info, console.error, console.warn];
  console.log = console.info = console.error = console.warn = () => {};
  try {
    return await fn();
  } finally {
    [console.log, console.info, console.error, console.warn] = saved;
  }
}

const UTCP_LOOP = `
  const t0 = Date.now();
  let r;
  for (let i = 0; i < ${CALLS}; i++) r = mcp.everything_echo({ message: "hi" });
  if (r !== "Echo: hi") throw new Error("unexpected echo: " + JSON.stringify(r));
  return { loop_ms: Date.now() - t0 };
`;

export async function startUtcp() {
  await import("@utcp/mcp"); // registers the MCP call template
  const { CodeModeUtcpClient } = await import("@utcp/code-mode");
  const client = await quiet(async () => {
    const c = await CodeModeUtcpClient.create(import.meta.dirname, null);
    await c.registerManual({ name: "mcp", call_template_type: "mcp", config: { mcpServers: { everything: { transport: "stdio", ...ECHO_SERVER } } } });
    return c;
  });
  const chain = async (code) => {
    const { result } = await quiet(() => client.callToolChain(code));
    return result;
  };
  const peer = {
    name: "UTCP code-mode (isolated-vm, fresh isolate per `callToolChain`)",
    version: `@utcp/code-mode ${versionOf("@utcp/code-mode")}, isolated-vm ${versionOf("isolated-vm")}`,
    limits: "isolate heap 128 MB (memoryLimit), 30 s timeout; shares the host process: no OS boundary",
    cold: async () => expectTwo(await chain("return 1 + 1;"), "utcp"),
    calls: async () => chain(UTCP_LOOP),
    probe: async (ctx) => JSON.parse(await chain(jsProbe(ctx))),
  };
  return { peers: [peer], close: () => quiet(() => client.close()) };
}

export async function startIsolatedVm() {
  const { default: ivm } = await import("isolated-vm");
  const warmIsolate = new ivm.Isolate({ memoryLimit: 128 });
  const warmContext = await warmIsolate.createContext();
  const peer = {
    name: "isolated-vm bare (new isolate + context per run)",
    version: `isolated-vm ${versionOf("isolated-vm")}`,
    limits: "isolate heap 128 MB (memoryLimit); shares the host process: no OS boundary",
    cold: async () => {
      const isolate = new ivm.Isolate({ memoryLimit: 128 });
      try {
        const context = await isolate.createContext();
        expectTwo(await context.eval("1 + 1"), "isolated-vm");
      } finally {
        isolate.dispose();
      }
    },
    warm: async () => expectTwo(await warmContext.eval("1 + 1"), "isolated-vm warm"),
    probe: async (ctx) => {
      const isolate = new ivm.Isolate({ memoryLimit: 128 });
      try {
        const context = await isolate.createContext();
        return JSON.parse(await context.eval(`(async () => { ${jsProbe(ctx)} })()`, { promise: true }));
      } catch (e) {
        return { memory: `blocked: ${e.message}` }; // an isolate over its limit is disposed, probe and all
      } finally {
        if (!isolate.isDisposed) isolate.dispose();
      }
    },
  };
  return { peers: [peer], close: async () => warmIsolate.dispose() };
}
