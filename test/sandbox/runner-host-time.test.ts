// A sandbox whose requests are cheap in bytes but dear to parse (an object of a million keys, 14 MB)
// is slowed down by the time the host spends on them, so other callers' work keeps running.

import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import type { UpstreamCallReply } from "../../src/sandbox/upstream-calls.js";
import { useRawRuntime } from "../fixtures/runtime.js";

const raw = useRawRuntime("host-time");

/** Python that writes requests of a million-key object for `seconds`, in the sandbox's own wire. */
const FLOOD = (write: string, seconds: number): string =>
  [
    "import time",
    "body = ('{' + ','.join('\"k%d\":0' % i for i in range(1000000)) + '}').encode()",
    write,
    "sent, began = 0, time.time()",
    `while time.time() - began < ${seconds}:`,
    "    send(sent, body)",
    "    sent += 1",
    "print('sent', sent)",
  ].join("\n");

/** Share of the flood's wall time the host's event loop was held in stretches over 100 ms. */
async function heldShare(sandbox: Sandbox, code: string, filename: string): Promise<{ share: number; stdout: string; calls: number }> {
  let calls = 0;
  const onUpstreamCall = async (): Promise<UpstreamCallReply> => {
    calls += 1;
    return { ok: true, value: calls };
  };
  let held = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    if (now - last > 100) held += now - last;
    last = now;
  }, 10);
  const began = performance.now();
  try {
    const r = await sandbox.run({ code, filename, timeoutMs: 90_000, outputCapBytes: 1 << 20, onUpstreamCall });
    expect(r.stderr.toString()).toBe("");
    return { share: held / (performance.now() - began), stdout: r.stdout.toString(), calls };
  } finally {
    clearInterval(ticker);
  }
}

describe("requests that take the host long to parse", () => {
  it("hold the host's event loop well under half the time, on the tool FIFO and on fd 4", async () => {
    // Unthrottled, either flood held the loop over 90% of the time (1.8 s per request).
    const bash = await raw.start("bash");
    const fifo = FLOOD("f = open('/sandgate/channel/tool-requests', 'wb', buffering=0)\nsend = lambda n, body: f.write(b'\\0b%d.1 s.t\\n' % n + body + b'\\0')", 4);
    const viaFifo = await heldShare(bash, `python3 -c "$(cat <<'PY'\n${fifo}\nPY\n)"`, "main.sh");
    expect(viaFifo.stdout).toMatch(/^sent \d+\n$/);
    expect(viaFifo.calls).toBeGreaterThan(0);
    expect(viaFifo.share).toBeLessThan(0.5);

    const python = await raw.start("python");
    const frame = "import json, os, struct\ndef send(n, body):\n    f = b'{\"type\":\"tool_call\",\"callId\":\"c%d\",\"tool\":\"s.t\",\"args\":' % n + body + b'}'\n    os.write(4, struct.pack('>I', len(f)) + f)";
    const viaFrames = await heldShare(python, FLOOD(frame, 4), "main.py");
    expect(viaFrames.stdout).toMatch(/^sent \d+\n$/);
    expect(viaFrames.calls).toBeGreaterThan(0);
    expect(viaFrames.share).toBeLessThan(0.5);
  }, 120_000);
});
