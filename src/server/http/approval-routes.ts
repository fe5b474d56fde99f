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
      method: "get",
      path: "/approvals/:approval_id",
      scope: "admin",
      tag: "approvals",
      summary: "One waiting run or tool call, with a tool call's arguments whole",
      description: "404 APPROVAL_NOT_FOUND when nothing waits under this id (unknown, already decided, timed out or cancelled).",
      response: oneApprovalOutput,
      handle: async ({ params }) => {
        const broker = queue();
        if (broker === undefined) throw new SandgateError("APPROVAL_NOT_FOUND", "this server decides approvals without the REST queue");
        const pending = broker.get(params.approval_id);
        return { ...toWireApproval(pending), arguments: pending.args ?? null };
      },
    }),
    defineRoute({
      method: "post",
      path: "/approvals/:approval_id",
      scope: "admin",
      tag: "approvals",
      summary: "Approve or deny a waiting run or tool call; the decision and who made it are audited",
      description: "404 APPROVAL_NOT_FOUND when nothing waits under this id (unknown, already decided, timed out or cancelled); 409 APPROVAL_MISMATCH when args_digest names other arguments.",
      body: z.object({
        approve: z.boolean().describe("true lets it go ahead, false denies it"),
        reason: z.string().max(500).optional().describe("Why; the code sees it in the denial and the audit keeps it"),
        args_digest: z
          .string()
          .regex(/^[0-9a-f]{64}$/)
          .optional()
          .describe("The args_digest of the arguments you read: the decision holds only for them, and another digest is refused with 409 APPROVAL_MISMATCH (nothing decided)"),
      }),
      response: decideOutput,
      handle: async ({ params, body, owner }) => {
        const broker = queue();
        if (broker === undefined) throw new SandgateError("APPROVAL_NOT_FOUND", "this server decides approvals without the REST queue");
        const decision = { approved: body.approve, by: owner, ...(body.reason !== undefined && body.reason !== "" ? { reason: body.reason } : {}) };
        const decided = broker.decide(params.approval_id, decision, body.args_digest);
        return { approval: toWireApproval(decided), approved: decision.approved, by: decision.by };
      },
    }),
  ];
}
