// Upstream content passed on to the agent from code: return_image / return_content (Python) and
// returnImage / returnContent (JavaScript, TypeScript) with the reference "everything" server, over real MCP.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startCodeModeStack, type CodeModeStack } from "../fixtures/code-mode-stack.js";
import { callTool, type ToolResult } from "../fixtures/mcp-client.js";

const EVERYTHING = join(process.cwd(), "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

let dir: string;
let stack: CodeModeStack | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-return-content-"));
  stack = await startCodeModeStack(dir, {
    servers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } },
    pool: { python: 1, javascript: 1, bash: 0 },
    name: "return-content-test",
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Wire {
  status: string;
  stdout: string;
  stderr: string;
  images?: Array<{ mime: string; data_base64: string }>;
  images_note?: string;
  error?: { type: string; message: string };
}

async function execute(language: string, code: string): Promise<{ result: ToolResult; wire: Wire; images: Array<{ type: string; data: string; mimeType: string }> }> {
  const result = await callTool(stack!.client, "execute_code", { language, code });
  const wire = result.structuredContent as unknown as Wire;
  expect(result.isError, JSON.stringify(wire)).toBeFalsy();
  return { result, wire, images: result.content.filter((c) => c.type === "image") };
}

/** The base64 data the code printed on its last line (what the upstream tool gave it). */
const lastLine = (wire: Wire): string => wire.stdout.trim().split("\n").pop() ?? "";

it("Python return_image passes the upstream tool's PNG to the MCP client byte for byte", async () => {
  const { result, images, wire } = await execute(
    "python",
    'result = await call_mcp_tool("everything.get-tiny-image", {})\nreturn_image(result)\nprint(next(b["data"] for b in result if b["type"] == "image"))',
  );
  expect(images).toHaveLength(1);
  expect(images[0]!.mimeType).toBe("image/png");
  expect(Buffer.from(images[0]!.data, "base64").equals(Buffer.from(lastLine(wire), "base64"))).toBe(true);
  // The image comes after the text of the result.
  expect(result.content[0]!.type).toBe("text");
});

it("the REST result carries a returned upstream image in its images field", async () => {
  const res = await fetch(`${stack!.server.url}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ language: "javascript", code: 'returnImage(await callMCPTool("everything.get-tiny-image", {}))' }),
  });
  const body = (await res.json()) as Wire;
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(body.images).toEqual([{ mime: "image/png", data_base64: expect.stringMatching(/^iVBORw0KGgo/) }]);
});

it("JavaScript returnImage passes the image block of an upstream result", async () => {
  const { images, wire } = await execute(
    "javascript",
    'const result = await callMCPTool("everything.get-tiny-image", {});\nreturnImage(result);\nconsole.log(result.find((b) => b.type === "image").data)',
  );
  expect(images).toHaveLength(1);
  expect(Buffer.from(images[0]!.data, "base64").equals(Buffer.from(lastLine(wire), "base64"))).toBe(true);
});

it("TypeScript returnContent prints the text blocks and returns the image", async () => {
  const { images, wire } = await execute(
    "typescript",
    'const result: Array<{ type: string }> = await callMCPTool("everything.get-tiny-image", {});\nreturnContent(result);',
  );
  expect(images).toHaveLength(1);
  const texts = wire.stdout.trim().split("\n");
  expect(texts.length).toBeGreaterThanOrEqual(2);
});

it("Python return_content maps text, resources and audio, and names what it cannot pass on", async () => {
  const { wire, images } = await execute(
    "python",
    [
      "return_content([",
      '  {"type": "text", "text": "hello from upstream"},',
      '  {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "resource text"}},',
      '  {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/octet-stream", "blob": "AAAA"}},',
      '  {"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav"},',
      "])",
    ].join("\n"),
  );
  expect(images).toHaveLength(0);
  expect(wire.stdout).toContain("hello from upstream\nresource text\n");
  expect(wire.stdout).toContain("[resource file:///b.bin (application/octet-stream, 3 bytes) not passed on");
  expect(wire.stdout).toContain("[audio (audio/wav, 12 bytes) not passed on");
});

it("hostile image content from Python is dropped with a note, never a crash", async () => {
  const { wire, images } = await execute(
    "python",
    [
      "import base64",
      'png = next(b for b in await call_mcp_tool("everything.get-tiny-image", {}) if b["type"] == "image")',
      'return_image({"type": "image", "data": png["data"], "mimeType": "image/x-evil"})',
      'return_image({"type": "image", "data": "not base64 at all!!", "mimeType": "image/png"})',
      'return_image({"type": "image", "data": base64.b64encode(b"GIF89a" + b"x" * 100).decode(), "mimeType": "image/png"})',
      'return_image({"type": "image", "data": "A" * (4 * 1024 * 1024), "mimeType": "image/png"})',
      'return_image({"type": "image", "data": 42, "mimeType": "image/png"})',
      "for _ in range(9):",
      "    return_image(png)",
      'print("still running")',
    ].join("\n"),
  );
  expect(wire.stdout).toContain("still running");
  expect(images).toHaveLength(8);
  expect(wire.images_note).toMatch(/1 image over 2 MiB dropped/);
  expect(wire.images_note).toMatch(/1 image beyond 8 per call dropped/);
  expect(wire.images_note).toMatch(/4 images refused/);
});

it("return_image of content without an image raises a TypeError in Python and JavaScript", async () => {
  const py = await execute("python", 'try:\n    return_image([{"type": "text", "text": "x"}])\nexcept TypeError as e:\n    print(e)');
  expect(py.wire.stdout).toContain("return_image() got no image block (it got text)");
  const js = await execute("javascript", 'try { returnImage(42) } catch (e) { console.log(`${e.name}: ${e.message}`) }');
  expect(js.wire.stdout).toContain("TypeError: returnImage() needs MCP content");
});

it("JavaScript returnImage of an image far over the limit names it instead of sending it, and the code goes on", async () => {
  const { wire, images } = await execute(
    "javascript",
    'returnImage({ type: "image", data: "A".repeat(24 * 1024 * 1024), mimeType: "image/png" });\nreturnImage({ type: "image", data: "%%%", mimeType: "image/png" });\nconsole.log("still running")',
  );
  expect(wire.stdout).toContain("still running");
  expect(images).toHaveLength(0);
  expect(wire.images_note).toMatch(/1 image over 2 MiB dropped \(make them smaller[^)]*\); 1 image refused \(its data is not base64\)/);
});

it("Bash sandgate-tool --return passes an upstream image on and prints the text blocks byte for byte", async () => {
  const { wire, images } = await execute(
    "bash",
    [
      "sandgate-tool everything get-tiny-image > /tmp/r.json",
      "sandgate-tool --return /tmp/r.json > /tmp/text.txt; echo \"status $?\"",
      "echo '{\"type\":\"text\",\"text\":\"h\\u00e9 \\\"q\\\" \\\\ done\"}' | sandgate-tool --return",
      "echo '[1]' | sandgate-tool --return; echo \"bad $?\"",
    ].join("\n"),
  );
  expect(images).toHaveLength(1);
  expect(images[0]!.data).toMatch(/^iVBORw0KGgo/);
  expect(wire.stdout).toContain("status 0\nhé \"q\" \\ done\n");
  expect(wire.stdout).toContain("bad 2");
  expect(wire.stderr).toContain("sandgate-tool: --return failed: every item of the content must be an MCP content block");
});
