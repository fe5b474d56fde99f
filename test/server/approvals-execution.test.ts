// Code that the code policy sends for approval, decided by the MCP client's user (elicitation)
// through the real server on port 0: it runs when approved and is refused with APPROVAL_DENIED when not.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApprovalEvent } from "../../src/features/governance/index.js";
import { runCode, startApprovalStack, type ApprovalStack } from "../fixtures/approval-stack.js";

let stack: ApprovalStack;

beforeAll(async () => {
  stack = await startApprovalStack((base) => ({
    approvals: { timeoutS: 60, maxPending: 10, maxPendingPerClient: 5 },
    security: { ...base.security, categories: { ...base.security.categories, "process-exec": "approve" } },
  }));
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

describe("approval of a run over MCP elicitation", () => {
  it("code that policy sends for approval runs once the client's user approves, and is refused with APPROVAL_DENIED when denied", async () => {
    let approve = true;
    const prompts: string[] = [];
    const client = await stack.agentClient((message) => {
      prompts.push(message);
      return { action: "accept", content: { approve, ...(approve ? {} : { reason: "too risky" }) } };
    });
    const code = 'import os\nos.system("true")\nprint("ran")';
    const approved = await runCode(client, "python", code);
    expect(approved.wire.status, JSON.stringify(approved.structuredContent)).toBe("ok");
    expect(approved.wire.stdout).toBe("ran\n");
    expect(prompts[0]).toMatch(/run python code/);
    expect(prompts[0]).toMatch(/os\.system/);
    approve = false;
    const denied = await runCode(client, "python", code);
    expect(denied.isError).toBe(true);
    expect(JSON.stringify(denied.content)).toMatch(/not approved: denied by mcp-client:key:agent: too risky/);
    const decisions = stack.events.filter((e): e is ApprovalEvent => e.kind === "approval" && e.subject === "execution");
    expect(decisions.map((e) => [e.decision, e.by])).toEqual([
      ["requested", undefined],
      ["approved", "mcp-client:key:agent"],
      ["requested", undefined],
      ["denied", "mcp-client:key:agent"],
    ]);
  });
});
