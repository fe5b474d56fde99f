// An upstream tool's image content, returned to the agent from code: the reference "everything"
// server's get-tiny-image, called in a real sandbox and shown with sandgate.show.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startCodeModeStack, type CodeModeStack } from "../fixtures/code-mode-stack.js";
import { callTool } from "../fixtures/mcp-client.js";

const EVERYTHING = join(process.cwd(), "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

let dir: string;
let stack: CodeModeStack | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-images-upstream-"));
  stack = await startCodeModeStack(dir, {
    servers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } },
    pool: { python: 0, javascript: 0, bash: 0 },
    name: "images-upstream-test",
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The image content items of an execute_code call, and its text. */
async function imagesOf(language: string, code: string): Promise<{ images: unknown[]; text: string }> {
  const result = await callTool(stack!.client, "execute_code", { language, code });
  const text = result.content.filter((c) => c.type === "text").map((c) => (c as { text: string }).text).join("\n");
  expect(result.isError, text).toBeFalsy();
  return { images: result.content.filter((c) => c.type === "image"), text };
}

it("Python code returns an upstream tool's image to the agent with sandgate.show", async () => {
  const { images, text } = await imagesOf(
    "python",
    'import sandgate\nresult = await call_mcp_tool("everything.get-tiny-image", {})\nsandgate.show(result)\nprint([item["type"] for item in result])',
  );
  expect(text).toContain("['text', 'image', 'text']");
  expect(images).toEqual([{ type: "image", mimeType: "image/png", data: expect.stringMatching(/^iVBORw0KGgo/) }]);
});

it("JavaScript code returns the image item it picked from an upstream result", async () => {
  const { images } = await imagesOf("javascript", 'const result = await callMCPTool("everything.get-tiny-image", {});\nsandgate.show(result.find((item) => item.type === "image"));');
  expect(images).toEqual([{ type: "image", mimeType: "image/png", data: expect.stringMatching(/^iVBORw0KGgo/) }]);
});
