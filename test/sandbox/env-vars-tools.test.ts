// A secret given as an environment variable, passed by code to an upstream tool call, is masked in
// the result's tool_calls too (the tool id code chose, the error an upstream server sent back).

import { beforeAll, describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

const SECRET = "sk-tool-secret-0123456789";
// Code mode with no upstream servers: calls reach its router, which answers that the tool does not exist.
const fx = useTestEngine({}, { python: 1, javascript: 0, bash: 0 }, { upstream: true });
beforeAll(() => fx.app.start());

describe("secrets in tool calls", () => {
  it("are masked in the tool id and the error of a failed call", async () => {
    const result = await fx.engine.execute({
      language: "python",
      env: { OPENAI_API_KEY: SECRET },
      code: "import os\ntry:\n    await call_mcp_tool('nope.' + os.environ['OPENAI_API_KEY'], {})\nexcept Exception as e:\n    print(e)",
    });
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]).toMatchObject({ tool: "nope.[masked:OPENAI_API_KEY]", ok: false });
    expect(result.stdout).toContain("[masked:OPENAI_API_KEY]");
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });
});
