// A sandgate-tool killed while it wrote its request leaves half a request in the sandbox's tool FIFO;
// the next call from that sandbox still reaches the host whole and gets its reply.

import { describe, expect, it } from "vitest";
import type { UpstreamCall, UpstreamCallReply } from "../../src/sandbox/sandbox.js";
import { useRawRuntime } from "../fixtures/runtime.js";

const raw = useRawRuntime("tool-pipe-partial");

describe("the tool FIFO after a writer died mid-request", () => {
  it("delivers the next sandgate-tool call whole, in Bash and from a Python subprocess", async () => {
    const calls: UpstreamCall[] = [];
    const onUpstreamCall = async (call: UpstreamCall): Promise<UpstreamCallReply> => {
      calls.push(call);
      return { ok: true, value: { tool: call.tool, args: call.args } };
    };
    const bash = await raw.start("bash");
    // What a writer killed mid-request leaves: a header and the start of its JSON, no closing NUL.
    const half = `printf 'b1.1 s.half\\n{"big": "' > /sandgate/channel/tool-requests`;
    const code = [half, "timeout 10 sandgate-tool s after '{\"k\":1}'; echo \"rc=$?\"", half, "timeout 10 sandgate-tool s again; echo \"rc=$?\""].join("\n");
    const r = await bash.run({ code, filename: "main.sh", timeoutMs: 30_000, outputCapBytes: 1 << 20, onUpstreamCall });
    expect(r.stderr.toString()).toBe("");
    expect(r.stdout.toString()).toBe('{"tool":"s.after","args":{"k":1}}\nrc=0\n{"tool":"s.again","args":{}}\nrc=0\n');

    const python = await raw.start("python");
    const pyCode = [
      "import subprocess",
      "with open('/sandgate/channel/tool-requests', 'wb', buffering=0) as f: f.write(b'b2.2 s.half\\n[1, 2')",
      "r = subprocess.run(['sandgate-tool', 's', 'py', '{\"n\": 2}'], capture_output=True, text=True, timeout=10)",
      "print(r.returncode, r.stdout.strip())",
    ].join("\n");
    const p = await python.run({ code: pyCode, filename: "main.py", timeoutMs: 30_000, outputCapBytes: 1 << 20, onUpstreamCall });
    expect(p.stderr.toString()).toBe("");
    expect(p.stdout.toString()).toBe('0 {"tool":"s.py","args":{"n":2}}\n');
    expect(calls.map((c) => c.tool)).toEqual(["s.after", "s.again", "s.py"]);
  });
});
