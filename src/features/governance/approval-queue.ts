// The approvals broker: asks the calling client first (MCP elicitation), else keeps the request in
// a bounded in-memory queue until a person decides over REST or the time runs out.

import { randomUUID } from "node:crypto";
import type { SandgateConfig } from "../../config/index.js";
import { SandgateError } from "../../errors/index.js";
import type { ApprovalEvent, GovernanceEvents } from "./events.js";
import type { ApprovalBroker, ApprovalDecision, ApprovalRequest, Approver } from "./types.js";

export interface ApprovalQueueOptions {
  config: Pick<SandgateConfig, "approvals">;
  events: GovernanceEvents;
  /** How often a waiting request says so again through onWaiting; default 10 s. */
  reminderMs?: number;
  /**
   * No REST queue behind the client (sandgate stdio has no /approvals): a request the calling
   * client cannot answer is denied at once instead of waiting for a decision nobody can make.
   */
  clientOnly?: boolean;
}

/** A request waiting for a decision, as GET /approvals shows it. */
export interface PendingApproval extends ApprovalRequest {
  /** "client" while the calling client is being asked (it may still answer), "queue" once only REST can. */
  waitingOn: "client" | "queue";
}

interface Waiting {
  request: ApprovalRequest;
  waitingOn: "client" | "queue";
  settle(decision: ApprovalDecision): void;
}

/** A request as listed: a copy, without a tool call's full arguments. */
function shownOf(entry: Waiting): PendingApproval {
  const { args: _args, ...rest } = entry.request;
  return { ...structuredClone(rest), waitingOn: entry.waitingOn };
}

type RequestOptions = Parameters<ApprovalBroker["request"]>[1];

const NO_QUEUE = "the client cannot be asked (it has no MCP elicitation) and this server has no approvals queue (sandgate stdio); serve over HTTP to decide at /approvals";
/** What every approval event of one request shares. */
type EventBase = Pick<ApprovalEvent, "client" | "sessionId" | "executionId" | "approvalId" | "subject" | "summary" | "argsDigest">;

export class ApprovalQueue implements ApprovalBroker {
  private readonly config: ApprovalQueueOptions["config"];
  private readonly events: GovernanceEvents;
  private readonly reminderMs: number;
  private readonly clientOnly: boolean;
  /** Every request in flight, asked of its client or queued; the caps count them all. */
  private readonly waiting = new Map<string, Waiting>();

  constructor(options: ApprovalQueueOptions) {
    this.config = options.config;
    this.events = options.events;
    this.reminderMs = options.reminderMs ?? 10_000;
    this.clientOnly = options.clientOnly === true;
  }

  /**
   * Requests waiting for a decision, oldest first; `client` keeps one caller's. A tool call's full
   * arguments (up to the 16 MiB a call may carry) are left out: get() gives them one request at a time.
   */
  list(filter: { client?: string } = {}): PendingApproval[] {
    return [...this.waiting.values()].filter((w) => filter.client === undefined || w.request.client === filter.client).map((w) => shownOf(w));
  }

  /** One waiting request with a tool call's full arguments (the object the call will send: read, never change it). */
  get(id: string): PendingApproval {
    const entry = this.entryOf(id);
    return { ...shownOf(entry), ...(entry.request.args !== undefined ? { args: entry.request.args } : {}) };
  }

  /**
   * Decides a waiting request; the first decision wins, so one already decided or gone is not found.
   * With `argsDigest`, the decision holds only for the arguments it names: another digest is refused
   * and the request keeps waiting (the person read something else than what would run).
   */
  decide(id: string, decision: ApprovalDecision, argsDigest?: string): PendingApproval {
    const entry = this.entryOf(id);
    if (argsDigest !== undefined && argsDigest !== entry.request.argsDigest) {
      const what = entry.request.argsDigest === undefined ? "this request has no arguments (it is a run)" : `its arguments' digest is ${entry.request.argsDigest}`;
      throw new SandgateError("APPROVAL_MISMATCH", `approval ${id} was not decided: args_digest ${JSON.stringify(argsDigest)} does not name what waits (${what}); read it again with GET /approvals/${id}`, {
        data: { approvalId: id, ...(entry.request.argsDigest !== undefined ? { args_digest: entry.request.argsDigest } : {}) },
      });
    }
    const shown = shownOf(entry);
    entry.settle(decision);
    return shown;
  }

  private entryOf(id: string): Waiting {
    const entry = this.waiting.get(id);
    if (entry === undefined) {
      throw new SandgateError("APPROVAL_NOT_FOUND", `no approval request ${JSON.stringify(id)} is waiting: it is unknown, already decided, timed out or was cancelled (GET /approvals lists those waiting)`, {
        data: { approvalId: id },
      });
    }
    return entry;
  }

  async request(input: Omit<ApprovalRequest, "id" | "createdAt" | "expiresAt">, options: RequestOptions): Promise<ApprovalDecision> {
    const { timeoutS, maxPending, maxPendingPerClient } = this.config.approvals;
    const createdAt = Date.now();
    const request: ApprovalRequest = { ...input, id: randomUUID(), createdAt, expiresAt: createdAt + timeoutS * 1000 };
    const base: EventBase = { client: request.client, sessionId: request.sessionId, executionId: request.executionId, approvalId: request.id, subject: request.kind, summary: request.summary, ...(request.argsDigest !== undefined ? { argsDigest: request.argsDigest } : {}) };

    const full = this.fullReason(request.client, maxPending, maxPendingPerClient);
    if (full !== undefined) {
      const decision: ApprovalDecision = { approved: false, by: "queue-full", reason: full };
      await this.events.record({ kind: "approval", ...base, decision: "requested" });
      await this.events.record({ kind: "approval", ...base, decision: "denied", by: decision.by, waitedMs: 0 });
      return decision;
    }
    if (options.signal?.aborted) return this.cancelledAtOnce(base);
    if (this.clientOnly && options.approver === undefined) {
      await this.events.record({ kind: "approval", ...base, decision: "requested" });
      await this.events.record({ kind: "approval", ...base, decision: "denied", by: "none", waitedMs: 0 });
      return { approved: false, by: "none", reason: NO_QUEUE };
    }

    // The slot is taken before anything is awaited, so that requests arriving together cannot pass the caps.
    const open = this.open(request, options, timeoutS);
    try {
      await this.events.record({ kind: "approval", ...base, decision: "requested" });
    } catch (error) {
      open.close();
      throw error;
    }
    open.ask();
    const decision = await open.decided;
    const waitedMs = Date.now() - createdAt;
    const outcome = decision.approved ? "approved" : decision.by === "timeout" ? "timeout" : decision.by === "cancelled" ? "cancelled" : "denied";
    await this.events.record({ kind: "approval", ...base, decision: outcome, by: decision.by, waitedMs });
    return decision;
  }

  private async cancelledAtOnce(base: EventBase): Promise<ApprovalDecision> {
    await this.events.record({ kind: "approval", ...base, decision: "requested" });
    await this.events.record({ kind: "approval", ...base, decision: "cancelled", by: "cancelled", waitedMs: 0 });
    return { approved: false, by: "cancelled", reason: "the call was cancelled before it could be approved" };
  }

  /** Why the queue takes no more from `client`, or undefined when it has room. */
  private fullReason(client: string, maxPending: number, maxPerClient: number): string | undefined {
    if (this.waiting.size >= maxPending) {
      return `denied at once: ${this.waiting.size} approval requests already wait on this server (approvals.maxPending); decide some with POST /approvals/{id}`;
    }
    let mine = 0;
    for (const w of this.waiting.values()) if (w.request.client === client) mine += 1;
    if (mine >= maxPerClient) return `denied at once: ${mine} approval requests of this caller already wait (approvals.maxPendingPerClient); wait for them to be decided`;
    return undefined;
  }

  /**
   * Queues the request (its time limit, reminders and the caller's signal start now); `ask` then puts
   * it to the client's approver as well, and the first decision, the time limit or the signal ends it.
   */
  private open(request: ApprovalRequest, options: RequestOptions, timeoutS: number): { decided: Promise<ApprovalDecision>; ask: () => void; close: () => void } {
    const { approver, signal, onWaiting } = options;
    const asking = new AbortController();
    let resolve: (decision: ApprovalDecision) => void = () => undefined;
    const decided = new Promise<ApprovalDecision>((done) => (resolve = done));
    const entry: Waiting = { request, waitingOn: approver ? "client" : "queue", settle: (decision) => finish(decision) };
    const say = (): void => {
      if (onWaiting === undefined) return;
      const left = Math.max(0, Math.round((request.expiresAt - Date.now()) / 1000));
      const how = `${entry.waitingOn === "client" ? "answer the client's prompt, or an admin can" : "an admin can"} POST /approvals/${request.id}`;
      try {
        onWaiting(`waiting for approval ${request.id}: ${request.summary} (${how}; denied in ${left} s without a decision)`);
      } catch {
        // A progress sink that fails must not decide the request.
      }
    };
    const onAbort = (): void => finish({ approved: false, by: "cancelled", reason: "the call was cancelled while it waited for approval" });
    const timer = setTimeout(() => finish({ approved: false, by: "timeout", reason: `nobody decided within ${timeoutS} s (approvals.timeoutS)` }), timeoutS * 1000);
    const reminder = setInterval(say, this.reminderMs);
    const finish = (decision: ApprovalDecision): void => {
      if (this.waiting.get(request.id) !== entry) return;
      this.waiting.delete(request.id);
      clearTimeout(timer);
      clearInterval(reminder);
      signal?.removeEventListener("abort", onAbort);
      asking.abort();
      resolve(decision);
    };
    this.waiting.set(request.id, entry);
    signal?.addEventListener("abort", onAbort, { once: true });
    return {
      decided,
      ask: () => {
        say();
        if (approver) this.ask(approver, request, asking.signal, entry, say);
      },
      close: () => finish({ approved: false, by: "cancelled", reason: "the request could not be recorded" }),
    };
  }

  /** The client's answer decides; no answer (no elicitation, an error) leaves the request to the queue. */
  private ask(approver: Approver, request: ApprovalRequest, signal: AbortSignal, entry: Waiting, say: () => void): void {
    const toQueue = (): void => {
      if (signal.aborted || !this.waiting.has(request.id)) return;
      if (this.clientOnly) {
        entry.settle({ approved: false, by: "none", reason: NO_QUEUE });
        return;
      }
      entry.waitingOn = "queue";
      say();
    };
    let asked: Promise<ApprovalDecision | undefined>;
    try {
      asked = approver(request, signal);
    } catch {
      toQueue();
      return;
    }
    asked.then(
      (decision) => (decision === undefined ? toQueue() : entry.settle(decision)),
      () => toQueue(),
    );
  }
}

/** A broker for where nobody can answer (a terminal run): everything that needs approval is denied at once. */
export function refusingBroker(reason: string): ApprovalBroker {
  return { request: () => Promise.resolve({ approved: false, by: "none", reason }) };
}
