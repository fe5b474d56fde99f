// The question a run or a tool call puts to a human, the answer, and the caller's own way to ask
// (MCP elicitation): the surfaces supply an Approver, governance asks it, the engine passes it on.

/** A question put to a human: may this run or tool call go ahead? */
export interface ApprovalRequest {
  id: string;
  kind: "execution" | "tool_call";
  /** Identity of the caller whose code asks (an API key's name, an MCP session, a peer). */
  client: string;
  sessionId: string | null;
  executionId: string;
  /** One line a person can decide on, e.g. "run python code with risk 72 (process-exec at line 3)". */
  summary: string;
  /** Tool calls: "server.tool" and the arguments' size; executions: language, risk and findings. */
  details: Record<string, unknown>;
  /**
   * Tool calls: the arguments as they will be sent (the same object, never read again from the
   * sandbox), for GET /approvals/{id}; the list and the client's form show the bounded view in details.
   */
  args?: Record<string, unknown>;
  /** Tool calls: sha256 of the arguments' canonical JSON; a decision naming another digest is refused. */
  argsDigest?: string;
  createdAt: number;
  expiresAt: number;
}

export interface ApprovalDecision {
  approved: boolean;
  /** Who decided: "mcp-client:<identity>", "key:<name>", or "timeout". */
  by: string;
  reason?: string;
}

/**
 * Asks the calling client itself (MCP elicitation). Resolves undefined when it cannot ask (the
 * client has no elicitation, or declined to answer), so the broker falls back to the REST queue.
 */
export type Approver = (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalDecision | undefined>;
