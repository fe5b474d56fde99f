// Other systems' names for an input field (microsandbox's `template` for the language) are accepted
// wherever the arguments are parsed as a tool's, and listed nowhere: not in tools/list, not in OpenAPI.

import { describe, expect, it } from "vitest";
import { withAliasesResolved } from "../../src/operations/index.js";
import { connectMcp } from "../fixtures/mcp-client.js";
import { expectError, jsonApi, useTestServer } from "../server-helpers.js";

const rest = useTestServer({ pool: { python: 1, javascript: 1, bash: 0 } });
const api = jsonApi(() => rest.server.url);

describe("execute_code's template, microsandbox's name for the language", () => {
  it("runs Python and Node code over REST, over JSON-RPC with the tool as the method, and through an MCP session", async () => {
    const viaRest = await api<{ status: string; stdout: string }>("/execute", { json: { template: "python", code: "print(6 * 7)" } });
    expect(viaRest.status).toBe(200);
    expect(viaRest.body).toMatchObject({ status: "ok", stdout: "42\n" });
    const viaRpc = await api<{ result: { structuredContent: { stdout: string } } }>("/mcp/execute", {
      json: { jsonrpc: "2.0", id: 1, method: "execute_code", params: { template: "node", code: "console.log(6 * 7)" } },
    });
    expect(viaRpc.body.result.structuredContent.stdout).toBe("42\n");
    const { client } = await connectMcp(rest.server.url, { name: "alias-test" });
    try {
      const ran = await client.callTool({ name: "execute_code", arguments: { template: "node", code: "console.log('from node')" } });
      expect(ran.structuredContent).toMatchObject({ status: "ok", stdout: "from node\n" });
      // Listed nowhere: it costs an agent no tokens.
      const listed = await client.listTools();
      expect(JSON.stringify(listed.tools)).not.toContain("template");
    } finally {
      await client.close();
    }
    const openapi = await api<Record<string, unknown>>("/openapi.json");
    expect(JSON.stringify(openapi.body)).not.toContain('"template"');
  });

  it("refuses template beside a different language, naming both, and still refuses a template that is no language", async () => {
    const both = expectError(await api("/execute", { json: { template: "python", language: "bash", code: "echo hi" } }), 400, "INVALID_INPUT");
    expect(both.message).toBe("template is another name for language; give one of them, not both with different values");
    expect(both.data).toMatchObject({ field: "template" });
    const same = await api<{ status: string }>("/execute", { json: { template: "python", language: "python", code: "pass" } });
    expect(same.body.status).toBe("ok");
    const unknown = expectError(await api("/execute", { json: { template: "cobol", code: "x" } }), 400, "UNKNOWN_LANGUAGE");
    expect(unknown.message).toContain("cobol");
  });
});

describe("withAliasesResolved", () => {
  it("renames an alias to its field and leaves what is not an object to the schema", () => {
    expect(withAliasesResolved({ template: "node", code: "1" }, { template: "language" })).toEqual({ language: "node", code: "1" });
    expect(withAliasesResolved({ code: "1" }, { template: "language" })).toEqual({ code: "1" });
    for (const odd of [null, [1], "x", undefined]) expect(withAliasesResolved(odd, { template: "language" })).toBe(odd);
    // An own property only: a prototype's "template" is no argument.
    expect(withAliasesResolved(Object.create({ template: "node" }) as object, { template: "language" })).toEqual({});
  });
});
