// sandgate-tool --return from hostile Bash code: content whose notes would make far more text than
// it holds is refused with advice, and the host stays within what one request may cost.

import { describe, expect, it } from "vitest";
import { useRawRuntime } from "../fixtures/runtime.js";

const raw = useRawRuntime("return-bounds");

describe("sandgate-tool --return", () => {
  it("refuses content whose notes would make more than 16 MiB of text, and still passes on the next return", async () => {
    const bash = await raw.start("bash");
    // 1.3 million blocks of an unknown type, 12 bytes each: each would become a note of about 120 characters.
    const code = [
      `python3 -c 'import sys; sys.stdout.write("[" + ",".join(["{\\"type\\":\\"\\"}"] * 1300000) + "]")' > /tmp/many.json`,
      'sandgate-tool --return /tmp/many.json | wc -c; echo "status ${PIPESTATUS[0]}"',
      `echo '[{"type":"text","text":"after"},{"type":"audio","data":"AAAA","mimeType":"audio/wav"}]' | sandgate-tool --return`,
    ].join("\n");
    const r = await bash.run({ code, filename: "main.sh", timeoutMs: 60_000, outputCapBytes: 1 << 20 });
    expect(r.stderr.toString()).toBe(
      "sandgate-tool: --return failed: the content makes more than 16 MiB of text (1300000 blocks); pass on fewer blocks, or write the rest to a file in /workspace\n",
    );
    expect(r.stdout.toString()).toBe(
      "0\nstatus 2\nafter\n[audio (audio/wav, 3 bytes) not passed on: the result carries text and images only; write it to a file in /workspace if it is needed later]\n",
    );
  }, 90_000);
});
