// Output schemas inferred from several real responses keep the types of keys that share a name with
// Object.prototype's members (constructor, toString, …) when only some responses have them.

import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCodeModeStack, type CodeModeStack } from "../fixtures/code-mode-stack.js";
import { callTool } from "../fixtures/mcp-client.js";

const SERVER = fileURLToPath(new URL("../fixtures/upstream/changing-tools.mjs", import.meta.url));

let dir: string;
let stack: CodeModeStack;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-infer-keys-"));
  chmodSync(dir, 0o755);
  stack = await startCodeModeStack(dir, {
    servers: { changing: { command: process.execPath, args: [SERVER] } },
    pool: { python: 0, javascript: 0, bash: 0 },
    name: "infer-keys-test",
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe("an output schema merged from responses where some keys are missing", () => {
  it("types constructor and toString from the responses that have them, as optional keys", async () => {
    // The tool answers {tool, args} with the arguments it got: the code chooses the keys of each response.
    const code = [
      "await call_mcp_tool('changing.hello', {'who': 'a', 'extra': {}})",
      "await call_mcp_tool('changing.hello', {'who': 'b', 'extra': {'constructor': {'y': 1}, 'toString': 's', 'valueOf': [1, 2]}})",
    ].join("\n");
    const result = await callTool(stack.client, "execute_code", { language: "python", code });
    const wire = result.structuredContent as { status: string; stderr: string };
    expect(wire.status, JSON.stringify(wire)).toBe("ok");
    const schema = stack.codeMode.catalog.resolve("changing.hello")!.outputSchema as { properties: { args: { properties: { extra: unknown } } } };
    expect(schema.properties.args.properties.extra).toEqual({
      type: "object",
      properties: {
        constructor: { type: "object", properties: { y: { type: "integer" } }, required: ["y"] },
        toString: { type: "string" },
        valueOf: { type: "array", items: { type: "integer" } },
      },
      required: [],
    });
  });
});
