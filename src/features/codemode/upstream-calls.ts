// Upstream calls made by sandboxed code during one execution: resolved against the catalog, checked
// against the tool policy, sent upstream with the host's credentials, counted, timed, recorded.

import { createHash } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { inferredInBackground, toolRefSplits, type Catalog } from "./catalog/index.js";
import type { ToolPolicyConfig } from "../../config/index.js";
import { isSandgateError } from "../../errors/index.js";
import { estimateTokens, type ExecutionContext, type UpstreamCallRecord, type UpstreamCallScope } from "../../execution/index.js";
import { argsDigest, argumentsView, deniedBecause, toolPolicyFor, type ApprovalDecision, type Governance, type ToolCallEvent } from "../governance/index.js";
import type { RunClock, UpstreamCallReply } from "../../sandbox/index.js";
import type { UpstreamManager } from "./upstream/index.js";
import type { ExecutionPii } from "./pii-boundary.js";
import { toolNotFoundMessage } from "./tool-not-found.js";

export interface UpstreamCallScopeOptions {
  catalog: Catalog;
  upstream: UpstreamManager;
  maxCalls: number;
  /** Masks configured secrets in messages that reach the code (and so the agent). */
  redact: (text: string) => string;
  /** The same for a tool result on its way into the sandbox. */
  redactValue: (value: unknown) => unknown;
  /** Called when a result taught the catalog a tool's output schema; `background` when nothing needs it on disk at once. */
  onInferred?: (background: boolean) => void;
  /**
   * Whether this caller's results may teach the output schemas every caller reads (and that are kept on
   * disk): a result's keys are its caller's data, so another tenant's must not become their signatures.
   */
  teachesSchemas: boolean;
  /** Which tools the code may call: allow, deny or approve per server and tool. */
  policy: ToolPolicyConfig;
  /** Who runs the execution: the identity, session and approver of its tool calls. */
  context: ExecutionContext;
  /** Approvals and the event record; without it, calls are not recorded and "approve" denies. */
  governance?: Governance | undefined;
  /** PII tokenization: tokens in arguments swapped back, values in results learnt, output guarded. */
  pii?: ExecutionPii | undefined;
}

/** Sizes and hashes of what crossed the boundary (the audit never keeps the values); hashed only where calls are recorded. */
function digest(value: unknown, hashed: boolean): { bytes: number; hash: string; text: string } {
  const text = JSON.stringify(value) ?? "null";
  return { bytes: Buffer.byteLength(text), hash: hashed ? createHash("sha256").update(text).digest("hex") : "", text };
}

/** The note on a call whose arguments hold tokens the session's vault did not issue. */
function unissuedNote(tokens: string[]): string | undefined {
  if (tokens.length === 0) return undefined;
  const one = tokens.length === 1;
  return `${tokens.join(", ")} ${one ? "is" : "are"} not ${one ? "a token" : "tokens"} of this session's personal data, so ${one ? "it" : "they"} reached the tool as typed; a token names a value only in the session (and the caller) whose tool results issued it`;
}

const OUTCOME_OF: Record<string, ToolCallEvent["outcome"]> = {
  ToolTimeout: "timeout",
  ToolUnavailable: "unavailable",
  ToolNotFound: "not_found",
  ToolLimit: "limit",
  ToolDenied: "denied",
};

const ERROR_KIND: Record<string, string> = {
  UPSTREAM_TIMEOUT: "ToolTimeout",
  UPSTREAM_UNAVAILABLE: "ToolUnavailable",
  UPSTREAM_ERROR: "ToolError",
};

/** The value code receives: structuredContent, else JSON parsed from the text, else the text. */
function toolResultValue(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const content = result.content ?? [];
  const texts = content.filter((c): c is { type: "text"; text: string } => c.type === "text").map((c) => c.text);
  if (texts.length === content.length && texts.length > 0) {
    const parsed = texts.map(parseJsonText);
    return parsed.length === 1 ? parsed[0] : parsed;
  }
  return content.length === 0 ? null : content;
}

function parseJsonText(text: string): unknown {
  const trimmed = text.trim();
  if (!/^[[{"]/.test(trimmed) && !/^(-?\d|true$|false$|null$)/.test(trimmed)) return text;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return text;
  }
}

/** The upstream message of an isError result, as plain text. */
function errorText(result: CallToolResult): string {
  const text = (result.content ?? [])
    .map((c) => (c.type === "text" ? c.text : `[${c.type}]`))
    .join("\n")
    .trim();
  return text || "the tool reported an error without a message";
}

export function createUpstreamCallScope(options: UpstreamCallScopeOptions): UpstreamCallScope {
  const { catalog, upstream, maxCalls, redact, context, governance, pii } = options;
  const calls: UpstreamCallRecord[] = [];
  let tokensInSandbox = 0;
  let attempted = 0;

  /** One tool_call event per call, whatever became of it; a refused record fails the call (the audit pushes back). */
  // With governance switched off (security.enabled false) nothing is recorded; the tool policy still applies.
  const recording = governance?.config.security.enabled === true ? governance : undefined;
  const record = async (event: Omit<ToolCallEvent, "kind" | "time" | "client" | "sessionId" | "executionId">, reply: UpstreamCallReply): Promise<UpstreamCallReply> => {
    if (recording === undefined) return reply;
    try {
      await recording.events.record({ kind: "tool_call", client: context.owner, sessionId: context.sessionId, executionId: context.executionId, ...event });
      return reply;
    } catch (error) {
      return { ok: false, error: { type: "ToolError", message: `the call could not be recorded in the audit trail, so its result is withheld: ${redact((error as Error).message)}` } };
    }
  };

  const fail = (tool: string, started: number, type: string, raw: string, note: string | undefined): UpstreamCallReply => {
    const message = redact(raw);
    calls.push({ tool, ok: false, durationMs: elapsed(started), error: message, ...(note ? { note } : {}) });
    return { ok: false, error: { type, message } };
  };

  /** Asks a person whether the call may go ahead; undefined when approved, else why not. */
  const approve = async (id: string, rule: string, args: Record<string, unknown>, argsBytes: number, signal: AbortSignal, clock: RunClock | undefined): Promise<string | undefined> => {
    if (governance === undefined) return `tool \`${id}\` needs approval (tool policy rule ${rule}) and nobody can approve here`;
    // Every field shows up in the view (a prefix of the JSON let padding push `to` out of sight), and
    // what is approved is this digest of these very arguments: the call below sends the same object.
    const digest = argsDigest(args);
    const view = argumentsView(args);
    // The person's time is not the code's: the run's time limit stops while the call waits.
    const release = clock?.hold();
    let decision: ApprovalDecision;
    try {
      decision = await governance.approvals.request(
        {
          kind: "tool_call",
          client: context.owner,
          sessionId: context.sessionId,
          executionId: context.executionId,
          summary: `call upstream tool ${id} with ${argsBytes} bytes of arguments (tool policy rule ${rule}: approve)`,
          details: { tool: id, rule, argsBytes, argsDigest: digest, arguments: view.text },
          args,
          argsDigest: digest,
        },
        { approver: context.approver, signal, onWaiting: context.onWaiting },
      );
    } finally {
      release?.();
    }
    // Nothing should change the object while it waits; if anything did, what runs is not what was approved.
    if (decision.approved && argsDigest(args) !== digest) return `tool \`${id}\` was approved for other arguments than it would send now, so it is not sent`;
    if (decision.approved) return undefined;
    const why = deniedBecause(decision);
    return `tool \`${id}\` was not approved (${why})`;
  };

  return {
    async onUpstreamCall(call, signal, clock) {
      const started = performance.now();
      const args = (call.args ?? {}) as Record<string, unknown>;
      const sent = digest(args, recording !== undefined);
      const base = { argsBytes: sent.bytes, argsHash: sent.hash };
      let note: string | undefined;
      const failed = (tool: string, server: string | undefined, action: ToolCallEvent["action"], type: string, raw: string, names?: readonly string[]): Promise<UpstreamCallReply> => {
        // An upstream's error text may quote personal data: learnt like a result; the code gets it whole, the audit tokens.
        const found = server !== undefined && names !== undefined ? pii?.learn(server, names, raw) : undefined;
        const reply = fail(tool, started, type, raw, note);
        const error = reply.ok ? undefined : pii?.active ? pii.text(reply.error.message, false) : reply.error.message;
        // A tool id the code built from tool data (no such tool) is as personal as the data.
        const id = pii?.active ? pii.text(tool, false) : tool;
        return record(
          { tool: id, ...(server ? { server } : {}), action, outcome: OUTCOME_OF[type] ?? "error", ...base, durationMs: elapsed(started), ...(found ? { pii: found } : {}), ...(error ? { error } : {}) },
          reply,
        );
      };
      if (++attempted > maxCalls) {
        return failed(call.tool, undefined, "allow", "ToolLimit", `this execution reached its limit of ${maxCalls} tool calls; do more work per call or split the job`);
      }
      let entry = catalog.named(call.tool);
      if (!entry) {
        // A configured server that is down has no tools in the catalog: say it is down (and when it is retried), not that it does not exist,
        // and never let a name meant for it reach another server's tool of that name.
        const down = downServer(upstream, call.tool);
        if (down) return failed(call.tool, down.server, "allow", "ToolUnavailable", down.message);
        const bare = catalog.bare(call.tool);
        if (bare.length > 1) {
          // A bare name more than one server has: which one is the code's to say.
          const ids = bare.map((tool) => tool.id);
          return failed(call.tool, undefined, "allow", "ToolNotFound", `tool name ${call.tool} is on ${ids.length} servers (${ids.join(", ")}); call it by its id, e.g. ${ids[0]}`);
        }
        if (bare.length === 0) return failed(call.tool, undefined, "allow", "ToolNotFound", toolNotFoundMessage(catalog, call.tool));
        // A bare name is one server's only while every server's tools are known: one that is not ready may have it too.
        const unknown = upstream.status().filter((s) => s.state !== "ready" && s.state !== "disabled" && s.name !== bare[0]?.server);
        if (unknown.length > 0) {
          const names = unknown.map((s) => `\`${s.name}\` (${s.state})`).join(", ");
          return failed(call.tool, undefined, "allow", "ToolUnavailable", `a bare tool name is taken only while every server is ready, and ${names} is not; call it by its id, ${bare[0]?.id ?? ""}`);
        }
        entry = bare[0];
      }
      if (!entry) return failed(call.tool, undefined, "allow", "ToolNotFound", toolNotFoundMessage(catalog, call.tool));
      const policy = toolPolicyFor(options.policy, entry.server, entry.name, [entry.tsName, entry.pyName]);
      if (policy.action === "deny") {
        const reason = `tool \`${entry.id}\` is denied by the tool policy (${policy.rule === "default" ? "toolPolicy.default" : `toolPolicy.rules["${policy.rule}"]`}: deny); ask the admin if the task needs it`;
        await recording?.events
          .record({ kind: "policy_block", client: context.owner, sessionId: context.sessionId, executionId: context.executionId, subject: "tool_call", tool: entry.id, findings: [], reason })
          .catch(() => undefined);
        return failed(entry.id, entry.server, "deny", "ToolDenied", reason);
      }
      if (policy.action === "approve") {
        const refusal = await approve(entry.id, policy.rule, args, sent.bytes, signal, clock);
        if (refusal !== undefined) return failed(entry.id, entry.server, "approve", "ToolDenied", refusal);
      }
      try {
        // The upstream layer applies the server's timeoutS, else codeMode.toolCallTimeoutS.
        const names = [entry.name, entry.tsName, entry.pyName];
        // Tokens the session's vault issued (the agent passed them on in its code) reach the server as the real values.
        const sentArgs = pii ? pii.detokenize(args) : args;
        note = pii ? unissuedNote(pii.unissuedTokens(sent.text)) : undefined;
        const result = await upstream.callTool(entry.server, entry.name, sentArgs, { signal });
        if (result.isError) return failed(entry.id, entry.server, policy.action, "ToolError", errorText(result), names);
        const value = options.redactValue(toolResultValue(result));
        const found = pii?.learn(entry.server, names, value);
        // Keys that are personal data (accounts keyed by IBAN) must not become property names in the
        // signatures every caller reads: tokenized, they are no plain keys and the object is typed as a map.
        // Values known from other tools count too, in results of a server with tokenization off.
        if (options.teachesSchemas) learnOutputSchema(catalog, entry.id, pii?.active ? pii.keysTokenized(value) : value, options.onInferred);
        // The value's JSON is made once: for the audit's digest, the token count and the reply's frame.
        const received = digest(value, recording !== undefined);
        tokensInSandbox += estimateTokens(typeof value === "string" ? value : received.text).tokens;
        calls.push({ tool: entry.id, ok: true, durationMs: elapsed(started), ...(note ? { note } : {}) });
        return record(
          { tool: entry.id, server: entry.server, action: policy.action, outcome: "ok", ...base, resultBytes: received.bytes, resultHash: received.hash, durationMs: elapsed(started), ...(found ? { pii: found } : {}) },
          { ok: true, value, json: received.text },
        );
      } catch (error) {
        const names = [entry.name, entry.tsName, entry.pyName];
        if (isSandgateError(error)) return failed(entry.id, entry.server, policy.action, ERROR_KIND[error.code] ?? "ToolError", error.message, names);
        return failed(entry.id, entry.server, policy.action, "ToolError", (error as Error).message, names);
      }
    },
    finish() {
      return { calls: [...calls], tokensInSandbox };
    },
    ...(pii ? { guard: pii } : {}),
  };
}

/** Types a tool from its first result; a failure to write the tree must not fail the call itself. */
function learnOutputSchema(catalog: Catalog, id: string, value: unknown, onInferred: ((background: boolean) => void) | undefined): void {
  try {
    if (catalog.observeOutput(id, value)) onInferred?.(inferredInBackground(catalog.resolve(id)?.outputSchemaResponses ?? 0));
  } catch {
    // The schema is kept; the files show it once the tree is next written (the next change of any tool).
  }
}

/** The server part of `ref` when it names a configured server that is not ready, with why and when it is retried. */
/** The server a tool ref names (any of the catalog's ways to split it), when it is configured and not ready. */
function downServer(upstream: UpstreamManager, ref: string): { server: string; message: string } | undefined {
  const status = toolRefSplits(ref)
    .map(({ server }) => upstream.serverStatus(server))
    .find((s) => s !== undefined && s.state !== "ready");
  if (!status) return undefined;
  const server = status.name;
  const retry = status.nextRetryAt === undefined ? "" : `; sandgate retries it at ${status.nextRetryAt}`;
  // The first line of why (list_servers has the server's stderr too).
  const why = status.error?.split("\n")[0];
  return { server, message: `upstream server \`${server}\` is not available (${status.state}${why ? `: ${why}` : ""})${retry}` };
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}
