// A secret given in env stays masked in a result's images note, which quotes the type code
// gave an image it sent: Python's and JavaScript's show() with the secret as the mime type.

import { describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

const SECRET = "sk-live-Hq7Zt2Wm9Xc4Rb8N";
const fx = useTestEngine({}, { python: 1, javascript: 1, bash: 0 });

describe("env masking of images_note", () => {
  it("masks a secret that Python code passes as an image's mime type", async () => {
    const result = await fx.engine.execute({
      language: "python",
      env: { API_TOKEN: SECRET },
      code: "import os, sandgate\nsandgate.show(b'\\x89PNG\\r\\n\\x1a\\nnot really', mime=os.environ['API_TOKEN'])",
    });
    expect(result.imagesNote).toContain("refused");
    expect(result.imagesNote).toContain("[masked:API_TOKEN]");
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });

  it("masks a secret that JavaScript code passes as an image's mime type", async () => {
    const result = await fx.engine.execute({
      language: "javascript",
      env: { API_TOKEN: SECRET },
      code: "sandgate.show(new Uint8Array([1, 2, 3]), process.env.API_TOKEN); 1",
    });
    expect(result.imagesNote).toContain("[masked:API_TOKEN]");
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });
});
