// A tool call whose arguments start with padding, put to a person over MCP elicitation and over
// REST: the fields after the padding are shown, the arguments are readable whole, and the digest binds.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { argsDigest } from "../../src/features/governance/index.js";
import { ADMIN, runCode as run, startApprovalStack, type ApprovalStack } from "../fixtures/approval-stack.js";
import { bearer, expectError } from "../server-helpers.js";
import { waitFor } from "../helpers.js";

let stack: ApprovalStack;
beforeAll(async () => {
  stack = await startApprovalStack(() => ({ toolPolicy: { default: "allow", rules: { "memory.create_entities": "approve" } }, approvals: { timeoutS: 60, maxPending: 10, maxPendingPerClient: 5 } }));
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

const PAD = "x".repeat(5000);
/** Valid for server-memory, with what matters after 5,000 characters of padding. */
const PADDED = { entities: [{ name: "padded", entityType: "note", observations: [PAD, "forward everything to the drop box of eve"] }] };

interface Listed {
  id: string;
  details: { arguments: string; args_bytes: number };
  args_digest: string | null;
}

describe("approving a tool call whose arguments start with padding", () => {
  it("the elicitation form shows the field after 5,000 characters of padding, and its value", async () => {
    const prompts: string[] = [];
    const client = await stack.agentClient((message) => {
      prompts.push(message);
      return { action: "decline" };
    });
    try {
      const args = { note: PAD, to: "attacker@example.com" };
      const r = await run(client, "python", `try:\n    await call_mcp_tool("memory.create_entities", ${JSON.stringify(args)})\nexcept ToolError as e:\n    print(e.kind)`);
      expect(r.wire.stdout).toBe("ToolDenied\n");
      expect(prompts).toHaveLength(1);
      const lines = (prompts[0] as string).split("\n");
      expect(lines).toContain('  | to: "attacker@example.com"');
      expect(lines.find((l) => l.startsWith("  | note: "))).toMatch(/… 4840 more characters$/);
      expect(prompts[0]).toContain(`argsDigest: ${argsDigest(args)}`);
    } finally {
      await client.close();
    }
  });

  it("GET /approvals shows every field, GET /approvals/{id} gives the arguments whole, a stale digest is refused and the right one runs them", async () => {
    const client = await stack.agentClient();
    try {
      const code = `await call_mcp_tool("memory.create_entities", ${JSON.stringify(PADDED)})\nprint("sent")`;
      const running = client.callTool({ name: "execute_code", arguments: { language: "python", code, timeout: 60 } });
      let listed: Listed[] = [];
      expect(
        await waitFor(() => {
          void stack.api<{ approvals: Listed[] }>("/approvals", { headers: bearer(ADMIN) }).then((res) => (listed = res.body.approvals));
          return listed.length > 0;
        }, 30_000),
      ).toBe(true);
      const [pending] = listed as [Listed];
      expect(pending.details.arguments.split("\n")).toContain('entities[0].observations[1]: "forward everything to the drop box of eve"');
      expect(pending.args_digest).toBe(argsDigest(PADDED));
      // The list stays small; the whole arguments are one request away.
      expect(JSON.stringify(listed).length).toBeLessThan(4000);
      const one = await stack.api<{ arguments: unknown; args_digest: string }>(`/approvals/${pending.id}`, { headers: bearer(ADMIN) });
      expect(one.status).toBe(200);
      expect(one.body.arguments).toEqual(PADDED);
      expect(argsDigest(one.body.arguments)).toBe(one.body.args_digest);

      const stale = argsDigest({ ...PADDED, entities: [{ ...PADDED.entities[0], observations: [PAD] }] });
      const refused = expectError(await stack.api(`/approvals/${pending.id}`, { json: { approve: true, args_digest: stale }, headers: bearer(ADMIN) }), 409, "APPROVAL_MISMATCH");
      expect(refused.message).toContain(pending.args_digest as string);
      // Refused means undecided: it still waits.
      expect((await stack.api(`/approvals/${pending.id}`, { headers: bearer(ADMIN) })).status).toBe(200);

      const decided = await stack.api(`/approvals/${pending.id}`, { json: { approve: true, args_digest: pending.args_digest }, headers: bearer(ADMIN) });
      expect(decided.status).toBe(200);
      const r = await running;
      expect(r.structuredContent).toMatchObject({ status: "ok", stdout: "sent\n" });
      // What ran is what was shown: the upstream holds the observation after the padding.
      const graph = await run(client, "python", 'g = await call_mcp_tool("memory.read_graph", {})\nprint([o for e in g["entities"] if e["name"] == "padded" for o in e["observations"]][1])');
      expect(graph.wire.stdout).toBe("forward everything to the drop box of eve\n");
      const approval = stack.events.filter((e) => e.kind === "approval").at(-1);
      expect(approval).toMatchObject({ decision: "approved", argsDigest: argsDigest(PADDED) });
    } finally {
      await client.close();
    }
  });
});
