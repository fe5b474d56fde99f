// execute_code's text result as an agent reads it over real MCP from real sandboxes: compact on
// success (output, value, one status line), each fact once on failure, still saying what to do.

import { describe, expect, it } from "vitest";
import { callTool, connectMcp, toolText } from "../fixtures/mcp-client.js";
import { useTestEngine } from "../helpers.js";
import { withServer } from "../server-helpers.js";

const fx = useTestEngine({}, { python: 1, javascript: 0, bash: 1 });

async function texts(calls: Array<Record<string, unknown>>): Promise<Array<{ text: string; structured: Record<string, unknown> }>> {
  const out: Array<{ text: string; structured: Record<string, unknown> }> = [];
  await withServer(fx, {}, async (server) => {
    const { client } = await connectMcp(server.url);
    try {
      for (const args of calls) {
        const result = await callTool(client, "execute_code", args);
        out.push({ text: toolText(result), structured: result.structuredContent });
      }
    } finally {
      await client.close();
    }
  });
  return out;
}

describe("execute_code's text result", () => {
  it("is the output, the value and one status line on success, with no empty sections and no closing sentence", async () => {
    const [printed, silent] = await texts([
      { language: "python", code: "print('rows: 3')\n6 * 7" },
      { language: "python", code: "x = 1" },
    ]);
    expect(printed?.text).toMatch(/^rows: 3\n\[value\] 42\n\[ok, \d+ ms\]$/);
    expect(silent?.text).toMatch(/^\[ok, \d+ ms\]$/);
    // The structured result keeps every field, as before.
    expect(printed?.structured).toMatchObject({ status: "ok", exit_code: 0, stdout: "rows: 3\n", stderr: "", value: 42, truncated: false, tool_calls: [] });
    expect(typeof printed?.structured.duration_ms).toBe("number");
  });

  it("shows a JSON value as JSON, a one-line repr as it is and a table or array as lines of text, not a quoted string", async () => {
    const [tuple, set, table] = await texts([
      { language: "python", code: "(1, 'a')" },
      { language: "python", code: "{3}" },
      { language: "python", code: "import pandas as pd\npd.DataFrame({'a': [1, 2]})" },
    ]);
    expect(tuple?.text).toMatch(/^\[value\] \[1,"a"\]\n\[ok, \d+ ms\]$/);
    expect(set?.text).toMatch(/^\[value\] \{3\}\n\[ok, \d+ ms\]$/);
    expect(table?.text).toMatch(/^\[value\]\n {3}a\n0 {2}1\n1 {2}2\n\n\[2 rows x 1 columns\]\n\[ok, \d+ ms\]$/);
    // The structured result says which is which.
    expect(tuple?.structured).toMatchObject({ value: [1, "a"], value_kind: "json" });
    expect(table?.structured).toMatchObject({ value_kind: "repr" });
  });

  it("names a Python exception once, in its traceback, and says what to do", async () => {
    const [failed] = await texts([{ language: "python", code: "def f():\n    return 1 / 0\nf()" }]);
    expect(failed?.text.match(/ZeroDivisionError: division by zero/g)).toHaveLength(1);
    expect(failed?.text).toMatch(/\[traceback\]\nTraceback[\s\S]*line 2, in f[\s\S]*ZeroDivisionError: division by zero\n\[error, exit 1, \d+ ms\] Fix the error and run it again\.$/);
    expect(failed?.structured).toMatchObject({ status: "error", error: { type: "ZeroDivisionError", message: "division by zero" } });
  });

  it("shows a failing shell line's stderr and exit status without restating it", async () => {
    const [failed] = await texts([{ language: "bash", code: "echo partial; echo 'no such file' >&2; exit 3" }]);
    expect(failed?.text).toMatch(/^partial\n\[stderr\]\nno such file\n\[error, exit 3, \d+ ms\]$/);
    expect(failed?.structured).toMatchObject({ status: "error", exit_code: 3 });
  });
});
