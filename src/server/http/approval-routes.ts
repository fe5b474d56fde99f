// The REST approvals queue: GET /approvals lists the runs and tool calls waiting for a person,
// POST /approvals/{id} decides one. Both need the admin scope; the decider's identity is audited.

import { z } from "zod";
import { SandgateError } from "../../errors/index.js";
import { ApprovalQueue, type PendingApproval } from "../../governance/index.js";
import type { ServerContext } from "../context.js";
import { toWireGovernanceData } from "../security-wire.js";
import { defineRoute, type RestRoute } from "./define-route.js";

const approvalSchema = z.object({
  id: z.string(),
  kind: z.enum(["execution", "tool_call"]),
  client: z.string().describe("Whose code asks: the caller's identity"),
  session_id: z.string().nullable(),
  execution_id: z.string(),
  summary: z.string().describe("One line to decide on"),
  details: z.record(z.unknown()).describe("Tool calls: the tool, the rule and the arguments (cut at 1000 characters); runs: language, risk and findings"),
  created_at: z.string().describe("ISO 8601"),
  expires_at: z.string().describe("ISO 8601; denied as a timeout after it"),
  waiting_on: z.enum(["client", "queue"]).describe("client: the calling MCP client is being asked too (the first answer wins); queue: only this API can decide"),
});
const listApprovalsOutput = z.object({ approvals: z.array(approvalSchema) });
const decideOutput = z.object({ approval: approvalSchema, approved: z.boolean(), by: z.string() });

/** The details in the wire's spelling: findings as in `security`, args_bytes. */
function wireDetails(details: Record<string, unknown>): Record<string, unknown> {
  const { argsBytes, ...rest } = details;
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
    created_at: new Date(pending.createdAt).toISOString(),
    expires_at: new Date(pending.expiresAt).toISOString(),
    waiting_on: pending.waitingOn,
  };
}

export function approvalRoutes(ctx: ServerContext): RestRoute[] {
  /** The queue, when the governance decides approvals with one (a custom broker keeps its own). */
  const queue = (): ApprovalQueue | undefined => (ctx.governance.approvals instanceof ApprovalQueue ? ctx.governance.approvals : undefined);
  return [
    defineRoute({
      method: "get",
      path: "/approvals",
      scope: "admin",
      tag: "approvals",
      summary: "Runs and upstream tool calls waiting for a person's approval, oldest first",
      response: listApprovalsOutput,
      handle: async () => ({ approvals: (queue()?.list() ?? []).map(toWireApproval) }),
    }),
    defineRoute({
      method: "post",
      path: "/approvals/:approval_id",
      scope: "admin",
      tag: "approvals",
      summary: "Approve or deny a waiting run or tool call; the decision and who made it are audited",
      description: "404 APPROVAL_NOT_FOUND when nothing waits under this id (unknown, already decided, timed out or cancelled).",
      body: z.object({
        approve: z.boolean().describe("true lets it go ahead, false denies it"),
        reason: z.string().max(500).optional().describe("Why; the code sees it in the denial and the audit keeps it"),
      }),
      response: decideOutput,
      handle: async ({ params, body, owner }) => {
        const broker = queue();
        if (broker === undefined) throw new SandgateError("APPROVAL_NOT_FOUND", "this server decides approvals without the REST queue");
        const decision = { approved: body.approve, by: owner, ...(body.reason !== undefined && body.reason !== "" ? { reason: body.reason } : {}) };
        const decided = broker.decide(params.approval_id, decision);
        return { approval: toWireApproval(decided), approved: decision.approved, by: decision.by };
      },
    }),
  ];
}
