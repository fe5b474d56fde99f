// Images as results, in real sandboxes: matplotlib figures, PIL images and image values in Python,
// sandgate.show in Python and JavaScript, sandgate-show in Bash, the host's caps and checks, and
// images over MCP and REST.

import { inflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecutionResult } from "../../src/execution/index.js";
import { createTestEngine, useTestEngine, type TestEngine } from "../helpers.js";
import { callTool, connectMcp } from "../fixtures/mcp-client.js";
import { withServer } from "../server-helpers.js";

/** A 3 x 2 red PNG. */
const TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGP8zwAFTDAGAwATKQED8NgHhAAAAABJRU5ErkJggg==";
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** Width and height of a PNG, after checking that it decodes: its IDAT data inflates to exactly the rows its IHDR promises. */
function decodePng(base64: string): { width: number; height: number } {
  const png = Buffer.from(base64, "base64");
  expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
  expect(png.toString("latin1", 12, 16)).toBe("IHDR");
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const bitDepth = png[24]!;
  const channels = CHANNELS[png[25]!]!;
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    if (png.toString("latin1", at + 4, at + 8) === "IDAT") idat.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const pixels = inflateSync(Buffer.concat(idat));
  expect(pixels.length).toBe(height * (1 + Math.ceil((width * channels * bitDepth) / 8)));
  return { width, height };
}

const only = (result: ExecutionResult): { mime: string; dataBase64: string } => {
  expect(result.images, JSON.stringify({ ...result, images: undefined })).toHaveLength(1);
  return result.images![0]!;
};

describe("images from Python", () => {
  const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });
  const py = (code: string, sessionId?: string): Promise<ExecutionResult> =>
    fx.engine.execute({ code, language: "python", ...(sessionId ? { sessionId } : {}) });

  it("a matplotlib figure shown with plt.show() comes back as a PNG, without a warning, and is closed", async () => {
    const session = fx.engine.sessions.create();
    try {
      const result = await py("import matplotlib.pyplot as plt\nplt.figure(figsize=(4, 3))\nplt.plot([1, 3, 2])\nplt.show()\nprint('open after show:', plt.get_fignums())", session.id);
      expect(result.status).toBe("ok");
      expect(result.stdout).toBe("open after show: []\n");
      expect(result.stderr).toBe("");
      const { width, height } = decodePng(only(result).dataBase64);
      expect(width).toBeGreaterThan(100);
      expect(height).toBeGreaterThan(100);
      const after = await py("plt.get_fignums()", session.id);
      expect(after.value).toEqual([]);
      expect(after.images).toBeUndefined();
    } finally {
      await fx.engine.sessions.stop(session.id);
    }
  });

  it("figures left open at the end of a call come back as PNGs, in order", async () => {
    const result = await py("import matplotlib.pyplot as plt\nplt.figure(figsize=(2, 2))\nplt.plot([1, 2])\nplt.figure(figsize=(6, 2))\nplt.bar([1, 2], [3, 4])\nNone");
    expect(result.status).toBe("ok");
    expect(result.images).toHaveLength(2);
    const [first, second] = result.images!.map((image) => decodePng(image.dataBase64));
    expect(second!.width).toBeGreaterThan(first!.width * 2);
  });

  it("a figure as the last expression is one image, not two, and its value is a short text", async () => {
    const result = await py("import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2])\nfig");
    decodePng(only(result).dataBase64);
    expect(result.value).toMatch(/^<image\/png \d+ bytes>$/);
  });

  it("fig.show() and a pandas plot come back as PNGs without warnings", async () => {
    const result = await py(
      "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2])\nfig.show()\n" +
        "import pandas as pd\npd.DataFrame({'a': [1, 3, 2]}).plot()\nprint(len(plt.get_fignums()))",
    );
    expect(result.status, result.stderr).toBe("ok");
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("1\n"); // fig.show() closed its figure; the pandas one is left open
    expect(result.images).toHaveLength(2);
    for (const image of result.images!) decodePng(image.dataBase64);
  });

  it("a backend the code chooses stands; a GUI backend from a matplotlibrc (Debian's TkAgg) does not", async () => {
    const chosen = await py("import matplotlib\nmatplotlib.use('svg')\nimport matplotlib.pyplot as plt\nmatplotlib.get_backend()");
    expect(chosen.value).toBe("svg");
    const defaults = await py("import matplotlib.pyplot as plt\nimport matplotlib\nmatplotlib.get_backend()");
    expect(defaults.value).toBe("module://sandgate_mpl");
  });

  it("code that never imports matplotlib does not load it", async () => {
    const result = await py("import sys\n[name for name in ('matplotlib', 'sandgate_images') if name in sys.modules]");
    expect(result.value).toEqual([]);
    expect(result.images).toBeUndefined();
  });

  it("a PIL image as the last expression comes back as a PNG of its size", async () => {
    const result = await py("from PIL import Image\nImage.new('RGB', (7, 5), 'red')");
    expect(result.status).toBe("ok");
    expect(decodePng(only(result).dataBase64)).toEqual({ width: 7, height: 5 });
    expect(result.value).toMatch(/^<image\/png \d+ bytes>$/);
  });

  it("PNG and JPEG bytes as the last expression come back as images of their type", async () => {
    const png = await py(`import base64\nbase64.b64decode("${TINY_PNG}")`);
    expect(only(png)).toEqual({ mime: "image/png", dataBase64: TINY_PNG });
    const jpeg = await py("import io\nfrom PIL import Image\nbuf = io.BytesIO()\nImage.new('RGB', (4, 4)).save(buf, 'JPEG')\nbuf.getvalue()");
    expect(only(jpeg).mime).toBe("image/jpeg");
    expect(Buffer.from(only(jpeg).dataBase64, "base64").subarray(0, 3).toString("hex")).toBe("ffd8ff");
  });

  it("an SVG document as the last expression comes back as image/svg+xml", async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><circle r="4"/></svg>';
    const result = await py(`'''${svg}'''`);
    expect(only(result)).toEqual({ mime: "image/svg+xml", dataBase64: Buffer.from(svg).toString("base64") });
    expect(result.value).toBe(`<image/svg+xml ${svg.length} bytes>`);
  });

  it("an object with _repr_png_ (the IPython display protocol) comes back as its PNG", async () => {
    const result = await py(`import base64\nclass Chart:\n    def _repr_png_(self):\n        return base64.b64decode("${TINY_PNG}")\nChart()`);
    expect(only(result).dataBase64).toBe(TINY_PNG);
  });

  it("plain values stay values and bring no images", async () => {
    const result = await py("{'svg': 'not <svg', 'n': 1}");
    expect(result.value).toEqual({ svg: "not <svg", n: 1 });
    expect(result.images).toBeUndefined();
  });

  it("sandgate.show sends a workspace image file, a figure and PIL image mid-call, in order", async () => {
    const session = fx.engine.sessions.create();
    try {
      await py("from PIL import Image\nImage.new('RGB', (9, 4), 'blue').save('plot.png')", session.id);
      const result = await py(
        "import sandgate\nimport matplotlib.pyplot as plt\nfrom PIL import Image\n" +
          "sandgate.show('plot.png')\nfig = plt.figure(figsize=(1, 1))\nsandgate.show(fig)\nsandgate.show(Image.new('L', (2, 3)))\nplt.get_fignums()",
        session.id,
      );
      expect(result.status, result.stderr).toBe("ok");
      expect(result.images?.map((image) => image.mime)).toEqual(["image/png", "image/png", "image/png"]);
      expect(decodePng(result.images![0]!.dataBase64)).toEqual({ width: 9, height: 4 });
      expect(decodePng(result.images![2]!.dataBase64)).toEqual({ width: 2, height: 3 });
      expect(result.value).toEqual([]); // a shown figure is closed
    } finally {
      await fx.engine.sessions.stop(session.id);
    }
  });

  it("sandgate.show of something that is no image fails with what it accepts", async () => {
    const result = await py("import sandgate\nsandgate.show(42)");
    expect(result.status).toBe("error");
    expect(result.error?.message).toMatch(/cannot make an image of a int; pass a matplotlib figure/);
    const missing = await py("import sandgate\nsandgate.show('no-such.png')");
    expect(missing.error?.message).toMatch(/'no-such.png' is neither SVG text nor a readable image file \(No such file or directory\)/);
  });
});

describe("image caps and checks on the host", () => {
  let fx: TestEngine;
  beforeAll(() => {
    fx = createTestEngine({ SANDGATE_MAX_IMAGE_BYTES: "2048", SANDGATE_MAX_IMAGES: "2" }, { python: 0, javascript: 0, bash: 0 });
  });
  afterAll(async () => {
    await fx.close();
  });
  const py = (code: string): Promise<ExecutionResult> => fx.engine.execute({ code, language: "python" });

  it("an image over limits.maxImageBytes is dropped with a note, and the call still succeeds", async () => {
    const result = await py(
      "import os, sandgate\nfrom PIL import Image\nbig = Image.frombytes('RGB', (64, 64), os.urandom(64 * 64 * 3))\n" +
        `sandgate.show(big)\nbig.save('big.png')\nsandgate.show('big.png')\nimport base64\nsandgate.show(base64.b64decode("${TINY_PNG}"))\nprint('done')`,
    );
    expect(result.status).toBe("ok");
    expect(result.stdout).toBe("done\n");
    expect(result.images).toEqual([{ mime: "image/png", dataBase64: TINY_PNG }]);
    expect(result.imagesNote).toBe("2 images over 2 KiB dropped (make them smaller: fewer pixels, a lower dpi or JPEG); to keep an image as it is, save it to /workspace");
  });

  it("images beyond the per-call count are dropped with a note", async () => {
    const result = await py(`import base64, sandgate\nfor _ in range(5):\n    sandgate.show(base64.b64decode("${TINY_PNG}"))`);
    expect(result.images).toHaveLength(2);
    expect(result.imagesNote).toMatch(/^3 images beyond 2 per call dropped/);
  });

  it("image frames that lie about their type, are not base64 or name another type are refused", async () => {
    const result = await py(
      "import base64, json, os\n" +
        "def frame(obj):\n    data = json.dumps(obj).encode()\n    os.write(4, len(data).to_bytes(4, 'big') + data)\n" +
        "frame({'type': 'image', 'mime': 'image/png', 'data': base64.b64encode(b'GIF89a but called a PNG').decode()})\n" +
        "frame({'type': 'image', 'mime': 'text/html', 'data': base64.b64encode(b'<script>alert(1)</script>').decode()})\n" +
        "frame({'type': 'image', 'mime': 'image/jpeg', 'data': '!!not base64!!'})\n" +
        "frame({'type': 'image', 'mime': 'image/svg+xml', 'data': base64.b64encode(b'<html>no svg root</html>').decode()})\n" +
        "import sandgate\nsandgate.show(b'not a png at all', mime='image/png')\nprint('alive')",
    );
    expect(result.status).toBe("ok");
    expect(result.stdout).toBe("alive\n");
    expect(result.images).toBeUndefined();
    expect(result.imagesNote).toMatch(/^5 images refused \(its data is not image\/png\)/);
  });

  it("a flood of image frames keeps only the capped images and the sandbox stays usable", async () => {
    const session = fx.engine.sessions.create();
    try {
      const flood = await fx.engine.execute({
        code: `import base64, sandgate\nimage = base64.b64decode("${TINY_PNG}")\nfor _ in range(20000):\n    sandgate.show(image)\nprint('flooded')`,
        language: "python",
        sessionId: session.id,
      });
      expect(flood.status).toBe("ok");
      expect(flood.images).toHaveLength(2);
      expect(flood.imagesNote).toMatch(/^19998 images beyond 2 per call dropped/);
      const next = await fx.engine.execute({ code: "1 + 1", language: "python", sessionId: session.id });
      expect(next.value).toBe(2);
      expect(next.images).toBeUndefined();
    } finally {
      await fx.engine.sessions.stop(session.id);
    }
  });
});

describe("images and interrupts", () => {
  const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

  it("a timeout that interrupts Python while it sends images keeps the session and its state", async () => {
    const session = fx.engine.sessions.create();
    try {
      const setup = await fx.engine.execute({
        code: "import io, os, sandgate\nfrom PIL import Image\nbuf = io.BytesIO()\nImage.frombytes('RGB', (500, 500), os.urandom(500 * 500 * 3)).save(buf, 'PNG')\ndata = buf.getvalue()\nx = 41\nlen(data) > 500000",
        language: "python",
        sessionId: session.id,
      });
      expect(setup.value).toBe(true);
      const flood = await fx.engine.execute({ code: "while True:\n    sandgate.show(data)", language: "python", sessionId: session.id, timeoutS: 1 });
      expect(flood.status).toBe("timeout");
      expect(flood.stateReset).toBeUndefined();
      const next = await fx.engine.execute({ code: "x + 1", language: "python", sessionId: session.id });
      expect(next.value).toBe(42);
      expect(next.stateReset).toBeUndefined();
    } finally {
      await fx.engine.sessions.stop(session.id);
    }
  });

  it("a timeout that interrupts JavaScript while it sends images keeps the session and its state", async () => {
    const session = fx.engine.sessions.create();
    try {
      const setup = await fx.engine.execute({
        code: `var data = Buffer.concat([Buffer.from("${TINY_PNG}", "base64"), require("crypto").randomBytes(900000)]);\nvar x = 41;\ndata.length`,
        language: "javascript",
        sessionId: session.id,
      });
      expect(setup.status, setup.stderr).toBe("ok");
      const flood = await fx.engine.execute({ code: "for (;;) sandgate.show(data, 'image/png');", language: "javascript", sessionId: session.id, timeoutS: 1 });
      expect(flood.status).toBe("timeout");
      expect(flood.stateReset).toBeUndefined();
      const next = await fx.engine.execute({ code: "x + 1", language: "javascript", sessionId: session.id });
      expect(next.value).toBe(42);
      expect(next.stateReset).toBeUndefined();
    } finally {
      await fx.engine.sessions.stop(session.id);
    }
  });
});

describe("images from JavaScript and TypeScript", () => {
  const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

  it("sandgate.show takes a Buffer, base64 text, an MCP image item, SVG text and a workspace file", async () => {
    const session = fx.engine.sessions.create();
    try {
      const code = [
        `const b64 = "${TINY_PNG}";`,
        "require('fs').writeFileSync('tiny.png', Buffer.from(b64, 'base64'));",
        "sandgate.show(Buffer.from(b64, 'base64'));",
        "sandgate.show(b64);",
        "sandgate.show({ type: 'image', data: b64, mimeType: 'image/png' });",
        "sandgate.show('<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>');",
        "sandgate.show('tiny.png');",
        "'shown'",
      ].join("\n");
      const result = await fx.engine.execute({ code, language: "javascript", sessionId: session.id });
      expect(result.status, result.stderr).toBe("ok");
      expect(result.value).toBe("shown");
      expect(result.images?.map((image) => image.mime)).toEqual(["image/png", "image/png", "image/png", "image/svg+xml", "image/png"]);
      for (const image of result.images!.filter((i) => i.mime === "image/png")) expect(image.dataBase64).toBe(TINY_PNG);
    } finally {
      await fx.engine.sessions.stop(session.id);
    }
  });

  it("TypeScript code reaches sandgate.show too, and a bad argument fails clearly", async () => {
    const ok = await fx.engine.execute({ code: `const data: Uint8Array = Uint8Array.from(Buffer.from("${TINY_PNG}", "base64"));\nsandgate.show(data);`, language: "typescript" });
    expect(only(ok).dataBase64).toBe(TINY_PNG);
    const bad = await fx.engine.execute({ code: "sandgate.show(42)", language: "javascript" });
    expect(bad.status).toBe("error");
    expect(bad.error?.message).toMatch(/cannot make an image of number/);
  });
});

describe("images from Bash", () => {
  const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });

  it("sandgate-show returns an image file, from code and from a command line", async () => {
    const session = fx.engine.sessions.create();
    try {
      const code = await fx.engine.execute({ code: `echo ${TINY_PNG} | base64 -d > tiny.png\nsandgate-show tiny.png\necho shown`, language: "bash", sessionId: session.id });
      expect(code.status, code.stderr).toBe("ok");
      expect(code.stdout).toBe("shown\n");
      expect(only(code)).toEqual({ mime: "image/png", dataBase64: TINY_PNG });
      const command = await fx.engine.executeCommand({ command: "cp tiny.png copy && sandgate-show copy image/png", sessionId: session.id });
      expect(command.status, command.stderr).toBe("ok");
      expect(only(command).dataBase64).toBe(TINY_PNG);
    } finally {
      await fx.engine.sessions.stop(session.id);
    }
  });

  it("sandgate-show says what it needs when the type is unknown, and the host refuses a wrong one", async () => {
    const unknown = await fx.engine.execute({ code: "echo hi > notes.txt\nsandgate-show notes.txt", language: "bash" });
    expect(unknown.status).toBe("error");
    expect(unknown.stderr).toContain("sandgate-show: cannot tell the image type of notes.txt; name it: sandgate-show FILE image/png");
    const lying = await fx.engine.execute({ code: "echo hi > fake.png\nsandgate-show fake.png", language: "bash" });
    expect(lying.status).toBe("ok");
    expect(lying.images).toBeUndefined();
    expect(lying.imagesNote).toMatch(/^1 image refused \(its data is not image\/png\)/);
  });
});

describe("images through the server", () => {
  const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 0 });
  const code = `import base64, sandgate\nsandgate.show(base64.b64decode("${TINY_PNG}"))\nprint('with an image')`;

  it("an MCP client gets the text, then an image content item, and structuredContent without the data", async () => {
    await withServer(fx, {}, async (server) => {
      const { client } = await connectMcp(server.url);
      try {
        const result = await callTool(client, "execute_code", { language: "python", code });
        expect(result.isError).toBeFalsy();
        expect(result.content).toHaveLength(2);
        expect(result.content[0]).toMatchObject({ type: "text" });
        expect((result.content[0] as { text: string }).text).toMatch(/with an image[\s\S]*\[images\] image\/png/);
        expect(result.content[1]).toEqual({ type: "image", mimeType: "image/png", data: TINY_PNG });
        expect(result.structuredContent.status).toBe("ok");
        expect(result.structuredContent.images).toBeUndefined();
      } finally {
        await client.close();
      }
    });
  });

  it("REST POST /execute returns the images as {mime, data_base64} items", async () => {
    await withServer(fx, {}, async (_server, api) => {
      const reply = await api<{ status: string; images?: Array<{ mime: string; data_base64: string }> }>("/execute", { json: { language: "python", code } });
      expect(reply.status).toBe(200);
      expect(reply.body.status).toBe("ok");
      expect(reply.body.images).toEqual([{ mime: "image/png", data_base64: TINY_PNG }]);
    });
  });
});
