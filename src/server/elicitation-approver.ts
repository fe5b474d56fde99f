// The MCP client as approver: when it declared the elicitation capability, a run or tool call that
// needs approval is put to its user as a form {approve, reason}, on the stream of the call that waits.

import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ElicitResultSchema, type ElicitRequest, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { ApprovalDecision, ApprovalRequest, Approver } from "../features/governance/index.js";

/** The part of a request handler's `extra` the approver needs: requests tied to the call in progress. */
export interface ElicitingCall {
  sendRequest: (request: ElicitRequest, schema: typeof ElicitResultSchema, options: { signal: AbortSignal; timeout: number }) => Promise<ElicitResult>;
}

/** The form put to the user; approve is required so that an empty accept is no approval. */
const APPROVAL_FORM: ElicitRequest["params"] extends infer P ? (P extends { requestedSchema: infer S } ? S : never) : never = {
  type: "object",
  properties: {
    approve: { type: "boolean", title: "Approve", description: "Let it go ahead" },
    reason: { type: "string", title: "Reason", description: "Why (optional; kept in the audit trail)", maxLength: 500 },
  },
  required: ["approve"],
};

/** A detail longer than this is cut (the code of a run): the form is read, not scrolled. */
const DETAIL_CHARS = 2000;
const cut = (text: string): string => (text.length > DETAIL_CHARS ? `${text.slice(0, DETAIL_CHARS)}… (${text.length - DETAIL_CHARS} more characters)` : text);
/**
 * A tool call's `arguments` is already a bounded view with a line per field (approval-args.ts):
 * cutting it again here would drop whole fields from the end, which is what padding attacks aim at.
 */
const UNCUT = new Set(["arguments"]);

/**
 * A detail as the user reads it: one line, or (the code of a run) a block whose every line starts
 * with "  | ", so that text the caller wrote can never pass for a line of sandgate's own.
 */
const quoted = (text: string): string => (/[\r\n\u2028\u2029\u0085\v\f]/.test(text) ? `\n${text.split(/\r\n|[\r\n\u2028\u2029\u0085\v\f]/).map((line) => `  | ${line}`).join("\n")}` : text);

/** What the user reads: the one-line summary and the details that matter for the decision. */
export function approvalMessage(request: ApprovalRequest): string {
  const details = Object.entries(request.details)
    .map(([key, value]) => {
      const text = typeof value === "string" ? value : JSON.stringify(value);
      return `${key}: ${quoted(UNCUT.has(key) ? text : cut(text))}`;
    })
    .join("\n");
  const who = `${request.client}${request.sessionId ? `, session ${request.sessionId}` : ""}`;
  return `sandgate asks for approval: ${request.summary}.\nRequested by ${who}; approval id ${request.id}.\n${details}\nApprove it?`;
}

/**
 * An approver that asks the client, or undefined when it cannot (no elicitation capability). The
 * user's answer decides: accept with approve=true approves; accept with approve=false, decline and
 * cancel (the prompt dismissed) all deny, since nobody said yes. Only a failure to ask (the client
 * errors or does not answer before the approval's time limit) leaves the request to GET/POST /approvals.
 */
export function elicitationApprover(server: Server, call: ElicitingCall, owner: string): Approver | undefined {
  if (server.getClientCapabilities()?.elicitation === undefined) return undefined;
  return async (request, signal): Promise<ApprovalDecision | undefined> => {
    const by = `mcp-client:${owner}`;
    let result: ElicitResult;
    try {
      result = await call.sendRequest(
        { method: "elicitation/create", params: { message: approvalMessage(request), requestedSchema: APPROVAL_FORM } },
        ElicitResultSchema,
        { signal, timeout: Math.max(1, request.expiresAt - Date.now()) },
      );
    } catch {
      return undefined;
    }
    if (result.action === "accept") {
      const approve = result.content?.approve;
      const reason = typeof result.content?.reason === "string" && result.content.reason !== "" ? result.content.reason.slice(0, 500) : undefined;
      if (typeof approve !== "boolean") return { approved: false, by, reason: "the client accepted the form without answering approve" };
      return { approved: approve, by, ...(reason !== undefined ? { reason } : {}) };
    }
    return { approved: false, by, reason: result.action === "decline" ? "declined by the client's user" : "the client's user dismissed the approval prompt" };
  };
}
