// Approvals and the upstream tool policy through the real server on port 0, a real upstream MCP
// server and real sandboxes: elicitation by the SDK client, the REST queue, denials, and events.

import { createHash } from "node:crypto";
import { describe, expect, it, beforeAll, afterAll } from "vitest";
import { ApprovalQueue, GovernanceEvents, type ApprovalEvent, type GovernanceEvent, type ToolCallEvent } from "../../src/features/governance/index.js";
import { ADMIN, AGENT, runCode as run, startApprovalStack, type ApprovalStack } from "../fixtures/approval-stack.js";
import { bearer, expectError } from "../server-helpers.js";
import { sleep, waitFor } from "../helpers.js";

let stack: ApprovalStack;
const events: GovernanceEvent[] = [];
const api: ApprovalStack["api"] = (path, init) => stack.api(path, init);
const agentClient: ApprovalStack["agentClient"] = (answer) => stack.agentClient(answer);

beforeAll(async () => {
  stack = await startApprovalStack(() => ({
    // The server's rule denies; the tool rules are more specific and win.
    toolPolicy: { default: "allow", rules: { memory: "deny", "memory.read_graph": "allow", "memory.create_entities": "approve" } },
    approvals: { timeoutS: 60, maxPending: 10, maxPendingPerClient: 5 },
  }));
  stack.governance.events.subscribe({ record: (event) => void events.push(event) });
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

const ENTITY = { entities: [{ name: "approved-thing", entityType: "test", observations: ["made after approval"] }] };

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");
const approvalEvents = (): ApprovalEvent[] => events.filter((e): e is ApprovalEvent => e.kind === "approval");
const toolEvents = (): ToolCallEvent[] => events.filter((e): e is ToolCallEvent => e.kind === "tool_call");

describe("approval over MCP elicitation", () => {
  it("a tool call that policy sends for approval runs once the client's user approves it, and the decision is recorded", async () => {
    const prompts: string[] = [];
    const client = await agentClient((message) => {
      prompts.push(message);
      return { action: "accept", content: { approve: true, reason: "looks fine" } };
    });
    try {
      events.length = 0;
      const r = await run(client, "python", `r = await call_mcp_tool("memory.create_entities", ${JSON.stringify(ENTITY)})\nprint("created")`);
      expect(r.wire.status, r.wire.stderr).toBe("ok");
      expect(r.wire.stdout).toBe("created\n");
      expect(prompts).toHaveLength(1);
      expect(prompts[0]).toMatch(/memory\.create_entities/);
      expect(prompts[0]).toMatch(/approved-thing/);
      const decided = approvalEvents();
      expect(decided.map((e) => e.decision)).toEqual(["requested", "approved"]);
      expect(decided[1]).toMatchObject({ client: "key:agent", subject: "tool_call", by: "mcp-client:key:agent" });
      expect(decided[1]?.waitedMs).toBeGreaterThanOrEqual(0);
      const [call] = toolEvents();
      expect(call).toMatchObject({ tool: "memory.create_entities", server: "memory", action: "approve", outcome: "ok", client: "key:agent" });
      expect(call?.argsHash).toBe(sha256(JSON.stringify(ENTITY)));
      expect(call?.argsBytes).toBe(Buffer.byteLength(JSON.stringify(ENTITY)));
      expect(call?.resultHash).toMatch(/^[0-9a-f]{64}$/);
      // Never the values.
      expect(JSON.stringify(call)).not.toContain("made after approval");
    } finally {
      await client.close();
    }
  });

  it("a tool call the client's user denies fails in JavaScript with ToolDenied naming who and why", async () => {
    const client = await agentClient(() => ({ action: "accept", content: { approve: false, reason: "not today" } }));
    try {
      events.length = 0;
      const r = await run(
        client,
        "javascript",
        `try { await callMCPTool("memory.create_entities", ${JSON.stringify(ENTITY)}); console.log("created"); } catch (e) { console.log(e.kind + ": " + e.message); }`,
      );
      expect(r.wire.status, r.wire.stderr).toBe("ok");
      expect(r.wire.stdout).toMatch(/^ToolDenied: .*memory\.create_entities.*denied by mcp-client:key:agent: not today/);
      expect(approvalEvents().map((e) => e.decision)).toEqual(["requested", "denied"]);
      expect(toolEvents()).toEqual([expect.objectContaining({ tool: "memory.create_entities", action: "approve", outcome: "denied" })]);
    } finally {
      await client.close();
    }
  });

  it("a client's user who declines the prompt denies the call", async () => {
    const client = await agentClient(() => ({ action: "decline" }));
    try {
      const r = await run(client, "python", `try:\n    await call_mcp_tool("memory.create_entities", ${JSON.stringify(ENTITY)})\nexcept ToolError as e:\n    print(e.kind)`);
      expect(r.wire.stdout).toBe("ToolDenied\n");
    } finally {
      await client.close();
    }
  });
});

describe("the REST approvals queue", () => {
  it("a client without elicitation waits; GET /approvals lists the call, POST approves it and the code goes on", async () => {
    const client = await agentClient();
    try {
      events.length = 0;
      const progress: string[] = [];
      const code = `await call_mcp_tool("memory.create_entities", ${JSON.stringify(ENTITY)})\nprint("went on")`;
      const running = client.callTool({ name: "execute_code", arguments: { language: "python", code, timeout: 60 } }, undefined, {
        onprogress: (p) => void (p.message !== undefined && progress.push(p.message)),
      });
      let listed: { approvals: Array<{ id: string; kind: string; client: string; summary: string; waiting_on: string; details: Record<string, unknown> }> } = { approvals: [] };
      expect(
        await waitFor(() => {
          void api("/approvals", { headers: bearer(ADMIN) }).then((res) => (listed = res.body as typeof listed));
          return listed.approvals.length > 0;
        }, 30_000),
      ).toBe(true);
      const [pending] = listed.approvals;
      expect(pending).toMatchObject({ kind: "tool_call", client: "key:agent", waiting_on: "queue" });
      expect(pending?.summary).toMatch(/memory\.create_entities/);
      expect(pending?.details.arguments).toContain("approved-thing");
      const decided = await api(`/approvals/${pending?.id}`, { json: { approve: true, reason: "checked" }, headers: bearer(ADMIN) });
      expect(decided.status).toBe(200);
      expect(decided.body).toMatchObject({ approved: true, by: "key:admin" });
      const r = await running;
      expect((r.structuredContent as { stdout?: string }).stdout).toBe("went on\n");
      // The wait was told as MCP progress, naming the request and where to decide it.
      expect(progress.find((m) => m.startsWith("waiting for approval"))).toMatch(new RegExp(`^waiting for approval ${pending?.id}: call upstream tool memory\\.create_entities.*POST /approvals/`));
      expect(approvalEvents().at(-1)).toMatchObject({ decision: "approved", by: "key:admin" });
      // Decided once: a second decision finds nothing.
      expectError(await api(`/approvals/${pending?.id}`, { json: { approve: false }, headers: bearer(ADMIN) }), 404, "APPROVAL_NOT_FOUND");
    } finally {
      await client.close();
    }
  });

  it("a streamed REST run tells its wait as approval events and goes on once approved", async () => {
    const code = `await call_mcp_tool("memory.create_entities", ${JSON.stringify(ENTITY)})\nprint("streamed on")`;
    const res = await fetch(`${stack.server.url}/execute?stream=1`, {
      method: "POST",
      headers: { ...bearer(AGENT), "content-type": "application/json" },
      body: JSON.stringify({ language: "python", code, timeout: 60 }),
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!/event: approval\ndata: .*\n/.test(text)) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
    const id = /waiting for approval ([0-9a-f-]{36})/.exec(text)?.[1];
    expect(id, text).toBeDefined();
    expect((await api(`/approvals/${id}`, { json: { approve: true }, headers: bearer(ADMIN) })).status).toBe(200);
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
    expect(text).toMatch(/event: result\ndata: .*streamed on/);
  });

  it("the time a tool call waits for a person does not count against the run's time limit", async () => {
    const client = await agentClient();
    try {
      const code = `await call_mcp_tool("memory.create_entities", ${JSON.stringify(ENTITY)})\nprint("in time")`;
      const running = client.callTool({ name: "execute_code", arguments: { language: "python", code, timeout: 2 } });
      let id: string | undefined;
      expect(
        await waitFor(() => {
          void api<{ approvals: Array<{ id: string }> }>("/approvals", { headers: bearer(ADMIN) }).then((res) => (id = res.body.approvals[0]?.id));
          return id !== undefined;
        }, 30_000),
      ).toBe(true);
      // Longer than the whole 2 s limit of the run.
      await sleep(3000);
      expect((await api(`/approvals/${id}`, { json: { approve: true }, headers: bearer(ADMIN) })).status).toBe(200);
      const r = await running;
      expect(r.structuredContent).toMatchObject({ status: "ok", stdout: "in time\n" });
    } finally {
      await client.close();
    }
  });

  it("a key without the admin scope gets 403 on /approvals, and an unknown id is 404", async () => {
    expectError(await api("/approvals", { headers: bearer(AGENT) }), 403, "FORBIDDEN");
    expectError(await api("/approvals/nope", { json: { approve: true }, headers: bearer(AGENT) }), 403, "FORBIDDEN");
    expectError(await api("/approvals/nope", { json: { approve: true }, headers: bearer(ADMIN) }), 404, "APPROVAL_NOT_FOUND");
    const malformed = await api("/approvals/nope", { json: { approve: "yes" }, headers: bearer(ADMIN) });
    expect(malformed.status).toBe(400);
  });
});

describe("the tool policy", () => {
  it("a tool the policy denies raises ToolDenied in Python and JavaScript, naming the rule; a more specific allow wins", async () => {
    const client = await agentClient();
    try {
      events.length = 0;
      const py = await run(client, "python", 'try:\n    await call_mcp_tool("memory.search_nodes", {"query": "x"})\nexcept ToolError as e:\n    print(e.kind, e)\ng = await call_mcp_tool("memory.read_graph", {})\nprint("graph", type(g).__name__)');
      expect(py.wire.status, py.wire.stderr).toBe("ok");
      expect(py.wire.stdout).toMatch(/^ToolDenied .*memory\.search_nodes.*toolPolicy\.rules\["memory"\]: deny/);
      expect(py.wire.stdout).toMatch(/graph dict/);
      const js = await run(client, "javascript", 'try { await callMCPTool("memory.search_nodes", { query: "x" }); } catch (e) { console.log(e.kind); }');
      expect(js.wire.stdout).toBe("ToolDenied\n");
      const calls = toolEvents();
      expect(calls.map((c) => [c.tool, c.action, c.outcome])).toEqual([
        ["memory.search_nodes", "deny", "denied"],
        ["memory.read_graph", "allow", "ok"],
        ["memory.search_nodes", "deny", "denied"],
      ]);
      expect(events.filter((e) => e.kind === "policy_block")).toHaveLength(2);
    } finally {
      await client.close();
    }
  });

  it("search_tools tells the agent which tools are denied or need approval", async () => {
    const client = await agentClient();
    try {
      const found = await client.callTool({ name: "search_tools", arguments: { query: "entities graph nodes", detail: "name", limit: 50, server: "memory" } });
      const tools = (found.structuredContent as { tools: Array<{ id: string; policy?: string }> }).tools;
      const policyOf = (id: string): string | undefined => tools.find((t) => t.id === id)?.policy;
      expect(policyOf("memory.create_entities")).toBe("approve");
      expect(policyOf("memory.search_nodes")).toBe("deny");
      expect(tools.find((t) => t.id === "memory.read_graph")).not.toHaveProperty("policy");
      expect(JSON.stringify(found.content)).toMatch(/memory\.create_entities \[each call waits for a person's approval\]/);
    } finally {
      await client.close();
    }
  });

  it("shows the tool policy and the approval settings in /security/policy", async () => {
    const res = await api("/security/policy", { headers: bearer(AGENT) });
    expect(res.body).toMatchObject({
      tool_policy: { default: "allow", rules: { memory: "deny", "memory.read_graph": "allow", "memory.create_entities": "approve" } },
      approvals: { timeout_s: 60, max_pending: 10, max_pending_per_client: 5 },
    });
  });
});

describe("the approvals queue itself", () => {
  const request = { kind: "tool_call" as const, client: "key:x", sessionId: null, executionId: "e1", summary: "call memory.x", details: {} };

  it("denies as a timeout when nobody decides in time, and says it waits meanwhile", async () => {
    const recorded: GovernanceEvent[] = [];
    const events = new GovernanceEvents();
    events.subscribe({ record: (e) => void recorded.push(e) });
    const queue = new ApprovalQueue({ config: { approvals: { timeoutS: 0.3, maxPending: 5, maxPendingPerClient: 5 } }, events });
    const waiting: string[] = [];
    const decision = await queue.request(request, { onWaiting: (m) => waiting.push(m) });
    expect(decision).toMatchObject({ approved: false, by: "timeout" });
    expect(waiting[0]).toMatch(/^waiting for approval [0-9a-f-]+: call memory\.x/);
    expect(queue.list()).toEqual([]);
    expect(recorded.map((e) => (e as ApprovalEvent).decision)).toEqual(["requested", "timeout"]);
  });

  it("denies at once when the queue is full, overall or for one caller, and never grows past its caps", async () => {
    const events = new GovernanceEvents();
    const queue = new ApprovalQueue({ config: { approvals: { timeoutS: 30, maxPending: 3, maxPendingPerClient: 2 } }, events });
    const controller = new AbortController();
    const held = [
      queue.request(request, { signal: controller.signal }),
      queue.request(request, { signal: controller.signal }),
      queue.request({ ...request, client: "key:y" }, { signal: controller.signal }),
    ];
    expect(queue.list()).toHaveLength(3);
    const perClient = await queue.request({ ...request, client: "key:z" }, {});
    expect(perClient).toMatchObject({ approved: false, by: "queue-full" });
    expect(perClient.reason).toMatch(/maxPending/);
    expect(queue.list()).toHaveLength(3);
    controller.abort();
    expect((await Promise.all(held)).map((d) => d.by)).toEqual(["cancelled", "cancelled", "cancelled"]);
    expect(queue.list()).toEqual([]);
    // One caller's cap.
    const mine = [queue.request(request, { signal: AbortSignal.timeout(2000) }), queue.request(request, { signal: AbortSignal.timeout(2000) })];
    expect(await queue.request(request, {})).toMatchObject({ approved: false, by: "queue-full", reason: expect.stringMatching(/maxPendingPerClient/) });
    const [first] = queue.list();
    queue.decide(first!.id, { approved: true, by: "key:admin" });
    expect((await mine[0])?.approved).toBe(true);
    await mine[1];
  });

  it("without a queue behind it (stdio), what the client cannot answer is denied at once", async () => {
    const queue = new ApprovalQueue({ config: { approvals: { timeoutS: 600, maxPending: 5, maxPendingPerClient: 5 } }, events: new GovernanceEvents(), clientOnly: true });
    expect(await queue.request(request, {})).toMatchObject({ approved: false, by: "none", reason: expect.stringMatching(/no approvals queue/) });
    expect(await queue.request(request, { approver: () => Promise.resolve(undefined) })).toMatchObject({ approved: false, by: "none" });
    expect(await queue.request(request, { approver: () => Promise.resolve({ approved: true, by: "mcp-client:stdio" }) })).toEqual({ approved: true, by: "mcp-client:stdio" });
    expect(queue.list()).toEqual([]);
  });

  it("the first decision wins between the client and the queue, and a client that cannot answer leaves it to the queue", async () => {
    const queue = new ApprovalQueue({ config: { approvals: { timeoutS: 30, maxPending: 5, maxPendingPerClient: 5 } }, events: new GovernanceEvents() });
    // The approver never answers (a client whose user is away); an admin decides meanwhile.
    let askedSignal: AbortSignal | undefined;
    const decision = queue.request(request, {
      approver: (_r, signal) => {
        askedSignal = signal;
        return new Promise(() => undefined);
      },
    });
    expect(queue.list()[0]?.waitingOn).toBe("client");
    queue.decide(queue.list()[0]!.id, { approved: false, by: "key:admin", reason: "no" });
    expect(await decision).toEqual({ approved: false, by: "key:admin", reason: "no" });
    expect(askedSignal?.aborted).toBe(true);
    // An approver that cannot ask (undefined) hands over to the queue.
    const handed = queue.request(request, { approver: () => Promise.resolve(undefined) });
    await sleep(10);
    expect(queue.list()[0]?.waitingOn).toBe("queue");
    queue.decide(queue.list()[0]!.id, { approved: true, by: "key:admin" });
    expect((await handed).approved).toBe(true);
  });
});
