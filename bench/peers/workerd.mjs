// workerd through miniflare (the runtime of Cloudflare's code mode) in the side-by-side benchmark: the
// snippet is a worker module; its tool calls go to a service binding that calls the MCP server via the SDK.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CALLS, connectEcho, echoText, expectTwo, jsProbe, lastJson } from "./common.mjs";

const WORKER = (port) => `
export default {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    if (path === "/trivial") return new Response(String(1 + 1));
    if (path === "/calls") {
      const t0 = Date.now();
      let r;
      for (let i = 0; i < ${CALLS}; i++) {
        const res = await env.TOOLS.fetch("http://tools/call", { method: "POST", body: JSON.stringify({ name: "echo", arguments: { message: "hi" } }) });
        r = await res.text();
      }
      if (r !== "Echo: hi") throw new Error("unexpected echo: " + r);
      return Response.json({ loop_ms: Date.now() - t0 });
    }
    if (path === "/probe") return new Response(await (async () => { ${jsProbe({ port })} })());
    return new Response("not found", { status: 404 });
  },
};`;

export async function startWorkerd(ctx) {
  const { Miniflare } = await import("miniflare");
  const dir = join(import.meta.dirname, "node_modules");
  const version = `miniflare ${JSON.parse(readFileSync(join(dir, "miniflare/package.json"), "utf8")).version}, workerd ${JSON.parse(readFileSync(join(dir, "workerd/package.json"), "utf8")).version}`;
  const upstream = await connectEcho("bench-peers-workerd");
  const tools = async (request) => {
    const { name, arguments: args } = await request.json();
    return new Response(echoText(await upstream.callTool({ name, arguments: args })));
  };
  const options = { modules: true, script: WORKER(ctx.port), serviceBindings: { TOOLS: tools }, log: undefined };
  let warm;
  try {
    warm = new Miniflare(options);
    await warm.ready;
  } catch (e) {
    await upstream.close();
    throw e;
  }
  const get = async (mf, path) => {
    const res = await mf.dispatchFetch(`http://localhost${path}`);
    const text = await res.text();
    if (!res.ok) throw new Error(`workerd ${path}: ${res.status} ${text.slice(0, 300)}`);
    return text;
  };
  const peer = {
    name: "workerd via miniflare (new Miniflare per cold run; Cloudflare code mode's runtime)",
    version,
    limits: "V8 isolate in a workerd process; miniflare sets no CPU or memory limit locally",
    coldPerRound: 2,
    cold: async () => {
      const mf = new Miniflare(options);
      try {
        expectTwo(await get(mf, "/trivial"), "workerd");
      } finally {
        await mf.dispose();
      }
    },
    warm: async () => expectTwo(await get(warm, "/trivial"), "workerd warm"),
    calls: async () => lastJson(await get(warm, "/calls"), "workerd calls"),
    probe: async () => JSON.parse(await get(warm, "/probe")),
  };
  return {
    peers: [peer],
    close: async () => {
      await warm.dispose();
      await upstream.close();
    },
  };
}
