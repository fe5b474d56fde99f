// The approvals queue on REST: the runs and tool calls waiting for a person, one of them whole,
// and a person's decision on one. Admin scope; the decider's identity is audited.

import { z } from "zod";
import { SandgateError } from "../../errors/index.js";
import { ApprovalQueue, type PendingApproval } from "./approval-queue.js";
import type { Governance } from "./governance.js";
import { defineOperation } from "../../operations/index.js";
import { toWireGovernanceData } from "./wire.js";

const approvalSchema = z.object({
  id: z.string(),
  kind: z.enum(["execution", "tool_call"]),
  client: z.string().describe("Whose code asks: the caller's identity"),
  session_id: z.string().nullable(),
  execution_id: z.string(),
  summary: z.string().describe("One line to decide on"),
  details: z
    .record(z.unknown())
    .describe(
      "Tool calls: the tool, the rule, args_bytes and `arguments`, a view with one line per field (every field, each value cut at 160 characters, what is left out counted; GET /approvals/{id} has them whole); runs: language, risk, findings and the code",
    ),
  args_digest: z.string().nullable().describe("Tool calls: sha256 (hex) of the arguments' canonical JSON (keys sorted); POST it back to approve exactly these arguments"),
  created_at: z.string().describe("ISO 8601"),
  expires_at: z.string().describe("ISO 8601; denied as a timeout after it"),
  waiting_on: z.enum(["client", "queue"]).describe("client: the calling MCP client is being asked too (the first answer wins); queue: only this API can decide"),
});
const listApprovalsOutput = z.object({ approvals: z.array(approvalSchema) });
const oneApprovalOutput = approvalSchema.extend({
  arguments: z.record(z.unknown()).nullable().describe("Tool calls: the arguments whole, exactly as the call sends them once approved; runs: null"),
});
const decideOutput = z.object({ approval: approvalSchema, approved: z.boolean(), by: z.string() });
/** As every path parameter: any id is looked up, and one nothing waits under is APPROVAL_NOT_FOUND. */
const approvalId = z.string().min(1);
const NOT_FOUND = "404 APPROVAL_NOT_FOUND when nothing waits under this id (unknown, already decided, timed out or cancelled)";

/** The details in the wire's spelling: findings as in `security`, args_bytes. */
function wireDetails(details: Record<string, unknown>): Record<string, unknown> {
  const { argsBytes, argsDigest: _shownAtTop, ...rest } = details;
  return { ...toWireGovernanceData(rest), ...(argsBytes !== undefined ? { args_bytes: argsBytes } : {}) };
}

function toWireApproval(pending: PendingApproval): z.infer<typeof approvalSchema> {
  return {
    id: pending.id,
    kind: pending.kind,
    client: pending.client,
    session_id: pending.sessionId,
    execution_id: pending.executionId,
    summary: pending.summary,
    details: wireDetails(pending.details),
    args_digest: pending.argsDigest ?? null,
    created_at: new Date(pending.createdAt).toISOString(),
    expires_at: new Date(pending.expiresAt).toISOString(),
    waiting_on: pending.waitingOn,
  };
}

/** What the approvals operations read: the governance, whose broker may be the queue. */
export interface ApprovalsHost {
  governance: Governance;
}

/** The queue, when the governance decides approvals with one (a custom broker keeps its own). */
function queueOf(host: ApprovalsHost): ApprovalQueue | undefined {
  return host.governance.approvals instanceof ApprovalQueue ? host.governance.approvals : undefined;
}

function requireQueue(host: ApprovalsHost): ApprovalQueue {
  const queue = queueOf(host);
  if (queue === undefined) throw new SandgateError("APPROVAL_NOT_FOUND", "this server decides approvals without the REST queue");
  return queue;
}

export const listApprovals = defineOperation({
  id: "approvals.list",
  summary: "Runs and upstream tool calls waiting for a person's approval, oldest first",
  scope: "admin",
  effects: ["read"],
  input: z.object({}),
  output: listApprovalsOutput,
  run: async (host: ApprovalsHost) => ({ approvals: (queueOf(host)?.list() ?? []).map(toWireApproval) }),
  surfaces: { mcp: null, rest: { method: "get", path: "/approvals", tag: "approvals" }, sandbox: null },
});

export const getApproval = defineOperation({
  id: "approvals.get",
  summary: "One waiting run or tool call, with a tool call's arguments whole",
  scope: "admin",
  effects: ["read"],
  input: z.object({ approval_id: approvalId }),
  output: oneApprovalOutput,
  async run(host: ApprovalsHost, input) {
    const pending = requireQueue(host).get(input.approval_id);
    return { ...toWireApproval(pending), arguments: pending.args ?? null };
  },
  surfaces: { mcp: null, rest: { method: "get", path: "/approvals/:approval_id", tag: "approvals", description: `${NOT_FOUND}.` }, sandbox: null },
});

export const decideApproval = defineOperation({
  id: "approvals.decide",
  summary: "Approve or deny a waiting run or tool call; the decision and who made it are audited",
  scope: "admin",
  effects: ["write"],
  input: z.object({
    approval_id: approvalId,
    approve: z.boolean().describe("true lets it go ahead, false denies it"),
    reason: z.string().max(500).optional().describe("Why; the code sees it in the denial and the audit keeps it"),
    args_digest: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional()
      .describe("The args_digest of the arguments you read: the decision holds only for them, and another digest is refused with 409 APPROVAL_MISMATCH (nothing decided)"),
  }),
  output: decideOutput,
  async run(host: ApprovalsHost, input, call) {
    const decision = { approved: input.approve, by: call.owner, ...(input.reason !== undefined && input.reason !== "" ? { reason: input.reason } : {}) };
    const decided = requireQueue(host).decide(input.approval_id, decision, input.args_digest);
    return { approval: toWireApproval(decided), approved: decision.approved, by: decision.by };
  },
  surfaces: {
    mcp: null,
    rest: { method: "post", path: "/approvals/:approval_id", tag: "approvals", description: `${NOT_FOUND}; 409 APPROVAL_MISMATCH when args_digest names other arguments.` },
    sandbox: null,
  },
});
