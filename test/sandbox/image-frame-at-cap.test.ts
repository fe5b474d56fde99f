// An image as large as limits.maxImageBytes allows (12 MiB), passed on from upstream content or shown,
// reaches the caller: its frame (16 MiB of base64 plus its fields) is within what a runner may send.

import { describe, expect, it } from "vitest";
import { useRawRuntime } from "../fixtures/runtime.js";

const raw = useRawRuntime("image-frame-at-cap");
const MAX_IMAGE_BYTES = 12 * 1024 * 1024;

describe("an image at the largest limits.maxImageBytes", () => {
  it.each([
    ["python", "main.py", "import base64\nfrom sandgate import return_image\ndata = b'\\x89PNG\\r\\n\\x1a\\n' + b'\\0' * (12 * 1024 * 1024 - 8)\nreturn_image({'type': 'image', 'data': base64.b64encode(data).decode(), 'mimeType': 'image/png'})\nprint('sent')"],
    ["javascript", "main.js", "const data = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(12 * 1024 * 1024 - 8)]);\nreturnImage({ type: 'image', data: data.toString('base64'), mimeType: 'image/png' });\nconsole.log('sent')"],
  ] as const)("passed on with return_image in %s reaches the caller, and the sandbox lives on", async (kind, filename, code) => {
    const sandbox = await raw.start(kind);
    const r = await sandbox.run({ code, filename, timeoutMs: 30_000, outputCapBytes: 1 << 20, images: { maxBytes: MAX_IMAGE_BYTES, maxCount: 4 } });
    expect(r.status, r.message).toBe("ok");
    expect(r.stdout.toString()).toBe("sent\n");
    expect(r.images).toHaveLength(1);
    expect(Buffer.from(r.images![0]!.dataBase64, "base64").length).toBe(MAX_IMAGE_BYTES);
    expect(r.imagesNote).toBeUndefined();
    expect(sandbox.alive).toBe(true);
  });
});
