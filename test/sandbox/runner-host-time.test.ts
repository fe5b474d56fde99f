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

/** A flood's result and the upstream calls it made. */
interface Flood {
  stdout: string;
  calls: number;
}

/** Runs the floods side by side; returns each one's result and the share of their wall time the host's event loop was held in stretches over 100 ms. */
async function heldShare(floods: { sandbox: Sandbox; code: string; filename: string }[]): Promise<{ share: number; floods: Flood[] }> {
  let held = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    if (now - last > 100) held += now - last;
    last = now;
  }, 10);
  const began = performance.now();
  try {
    const results = await Promise.all(
      floods.map(async ({ sandbox, code, filename }): Promise<Flood> => {
        let calls = 0;
        const onUpstreamCall = async (): Promise<UpstreamCallReply> => {
          calls += 1;
          return { ok: true, value: calls };
        };
        const r = await sandbox.run({ code, filename, timeoutMs: 90_000, outputCapBytes: 1 << 20, onUpstreamCall });
        expect(r.stderr.toString()).toBe("");
        return { stdout: r.stdout.toString(), calls };
      }),
    );
    return { share: held / (performance.now() - began), floods: results };
  } finally {
    clearInterval(ticker);
  }
}

describe("requests that take the host long to parse", () => {
  it("hold the host's event loop well under half the time, on the tool FIFO and on fd 4 at once", async () => {
    // Unthrottled, either flood alone held the loop over 90% of the time (1.8 s per request). The two
    // run side by side (each sandbox has its own budget), which takes half the wall time of one after the other.
    const fifo = FLOOD("f = open('/sandgate/channel/tool-requests', 'wb', buffering=0)\nsend = lambda n, body: f.write(b'\\0b%d.1 s.t\\n' % n + body + b'\\0')", 4);
    const frame = "import json, os, struct\ndef send(n, body):\n    f = b'{\"type\":\"tool_call\",\"callId\":\"c%d\",\"tool\":\"s.t\",\"args\":' % n + body + b'}'\n    os.write(4, struct.pack('>I', len(f)) + f)";
    const { share, floods } = await heldShare([
      { sandbox: await raw.start("bash"), code: `python3 -c "$(cat <<'PY'\n${fifo}\nPY\n)"`, filename: "main.sh" },
      { sandbox: await raw.start("python"), code: FLOOD(frame, 4), filename: "main.py" },
    ]);
    for (const flood of floods) {
      expect(flood.stdout).toMatch(/^sent \d+\n$/);
      expect(flood.calls).toBeGreaterThan(0);
    }
    expect(share).toBeLessThan(0.5);
  }, 120_000);
});
