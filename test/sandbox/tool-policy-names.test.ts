// The tool policy cannot be sidestepped by naming: a rule written with a tool's TypeScript or Python
// wrapper name applies to every name the catalog accepts, and server names that are also names of
// Object.prototype's members (valueOf, constructor) still fall to the default.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { upstreamServerSchema } from "../../src/config/index.js";
import { toolPolicyFor } from "../../src/features/governance/index.js";
import { runCode as run, startApprovalStack, type ApprovalStack } from "../fixtures/approval-stack.js";

const MEMORY = join(process.cwd(), "node_modules/@modelcontextprotocol/server-memory/dist/index.js");
const dir = mkdtempSync(join(tmpdir(), "sandgate-tool-policy-names-"));
const stacks: ApprovalStack[] = [];
afterAll(async () => {
  for (const stack of stacks) await stack.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("tool policy rules and the names of tools", () => {
  it("a deny rule written with the camelCase wrapper name denies the tool under its raw, TypeScript and Python names", async () => {
    const stack = await startApprovalStack(() => ({ toolPolicy: { default: "allow", rules: { "memory.readGraph": "deny", "memory.search_nodes": "allow" } } }));
    stacks.push(stack);
    const client = await stack.agentClient();
    const js = await run(
      client,
      "javascript",
      'for (const name of ["memory.read_graph", "memory.readGraph", "memory/read_graph"]) { try { await callMCPTool(name, {}); console.log(name, "RAN"); } catch (e) { console.log(name, e.kind); } }\ntry { await servers.memory.readGraph({}); console.log("wrapper RAN"); } catch (e) { console.log("wrapper", e.kind); }',
    );
    expect(js.wire.stdout).toBe("memory.read_graph ToolDenied\nmemory.readGraph ToolDenied\nmemory/read_graph ToolDenied\nwrapper ToolDenied\n");
    const py = await run(client, "python", 'try:\n    await call_mcp_tool("memory.read_graph", {})\n    print("RAN")\nexcept ToolError as e:\n    print(e.kind, e)');
    expect(py.wire.stdout).toMatch(/^ToolDenied .*toolPolicy\.rules\["memory\.readGraph"\]: deny/);
  }, 120_000);

  it("server__tool and a bare tool name call the tool, and the tool's rule follows it under those names too", async () => {
    const stack = await startApprovalStack(() => ({ toolPolicy: { default: "allow", rules: { "memory.delete_entities": "deny" } } }));
    stacks.push(stack);
    const client = await stack.agentClient();
    const js = await run(
      client,
      "javascript",
      [
        'for (const name of ["memory__read_graph", "read_graph", "readGraph", "memory__delete_entities", "delete_entities", "no_such_tool"]) {',
        "  try { const r = await callMCPTool(name, name.includes('delete') ? { entityNames: ['x'] } : {}); console.log(name, 'RAN', typeof r); } catch (e) { console.log(name, e.kind); }",
        "}",
      ].join("\n"),
    );
    expect(js.wire.stdout).toBe(
      "memory__read_graph RAN object\nread_graph RAN object\nreadGraph RAN object\nmemory__delete_entities ToolDenied\ndelete_entities ToolDenied\nno_such_tool ToolNotFound\n",
    );
    const py = await run(client, "python", 'r = await call_mcp_tool("memory__search_nodes", {"query": "x"})\nprint(type(r).__name__)');
    expect(py.wire.stdout).toBe("dict\n");
  }, 120_000);

  it("a bare tool name two servers have fails listing both ids, and each id still works", async () => {
    const memory = (file: string): ReturnType<typeof upstreamServerSchema.parse> =>
      upstreamServerSchema.parse({ command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(dir, file) } });
    const stack = await startApprovalStack(() => ({ mcpServers: { notes: memory("notes.jsonl"), people: memory("people.jsonl") }, toolPolicy: { default: "allow", rules: {} } }));
    stacks.push(stack);
    const client = await stack.agentClient();
    const js = await run(
      client,
      "javascript",
      'try { await callMCPTool("read_graph", {}); } catch (e) { console.log(e.kind, e.message); }\nconsole.log(typeof (await callMCPTool("people__read_graph", {})));',
    );
    expect(js.wire.stdout).toBe("ToolNotFound tool `read_graph` failed: tool name read_graph is on 2 servers (notes.read_graph, people.read_graph); call it by its id, e.g. notes.read_graph\nobject\n");
  }, 120_000);

  it("while a server is down, a bare name is not taken as another server's tool, nor is down__tool", async () => {
    const stack = await startApprovalStack(() => ({
      mcpServers: {
        notes: upstreamServerSchema.parse({ command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(dir, "down-notes.jsonl") } }),
        broken: upstreamServerSchema.parse({ command: process.execPath, args: ["-e", "process.exit(3)"] }),
      },
      toolPolicy: { default: "allow", rules: {} },
    }));
    stacks.push(stack);
    const client = await stack.agentClient();
    const js = await run(
      client,
      "javascript",
      'for (const name of ["read_graph", "broken__read_graph", "broken.read_graph", "notes__read_graph"]) { try { await callMCPTool(name, {}); console.log(name, "RAN"); } catch (e) { console.log(name, e.kind, e.message.includes("broken")); } }',
    );
    expect(js.wire.stdout).toBe("read_graph ToolUnavailable true\nbroken__read_graph ToolUnavailable true\nbroken.read_graph ToolUnavailable true\nnotes__read_graph RAN\n");
  }, 120_000);

  it("a server named like an Object.prototype member gets the default deny, not an inherited value", async () => {
    const stack = await startApprovalStack(() => ({
      mcpServers: { valueOf: upstreamServerSchema.parse({ command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } }) },
      toolPolicy: { default: "deny", rules: {} },
    }));
    stacks.push(stack);
    const client = await stack.agentClient();
    const js = await run(client, "javascript", 'try { await callMCPTool("valueOf.read_graph", {}); console.log("RAN"); } catch (e) { console.log(e.kind); }');
    expect(js.wire.stdout).toBe("ToolDenied\n");
  }, 120_000);

  it("where rules for several names of one tool disagree, the most restrictive wins", () => {
    const policy = { default: "allow" as const, rules: { "gh.create_issue": "allow" as const, "gh.createIssue": "approve" as const } };
    expect(toolPolicyFor(policy, "gh", "create_issue", ["createIssue", "create_issue"])).toEqual({ action: "approve", rule: "gh.createIssue" });
    expect(toolPolicyFor({ default: "deny", rules: {} }, "constructor", "x")).toEqual({ action: "deny", rule: "default" });
  });
});
