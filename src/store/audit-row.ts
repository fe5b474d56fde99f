// An audit row: the indexed columns a governance event is filed under, the event itself as JSON,
// and the hash that chains it to the row before it.

import { createHash } from "node:crypto";
import type { ExecutionEvent, GovernanceEvent } from "./audit-events.js";
import { splitCode, type LargeCode } from "./audit-code.js";

/** The columns a row is filtered by; `data` holds the whole event. */
export interface AuditColumns {
  time: number;
  kind: string;
  client: string;
  session_id: string | null;
  execution_id: string | null;
  language: string | null;
  status: string | null;
  risk: number | null;
  action: string | null;
  tool: string | null;
  data: string;
  /** A run's program too long to keep in `data`; not a column (audit_code holds it, see audit-code.ts). */
  large?: LargeCode;
}

/** A stored row as SQLite gives it back. */
export interface AuditRow extends AuditColumns {
  id: number;
  prev_hash: string;
  hash: string;
}

/** The anchor of an empty log: the first row's prev_hash until retention deletes rows. */
export const GENESIS_HASH = "0".repeat(64);

type Filed = Pick<AuditColumns, "language" | "status" | "risk" | "action" | "tool">;

/** Which columns each kind of event fills; a kind without a line here fails to compile. */
function filed(event: GovernanceEvent): Filed {
  const none: Filed = { language: null, status: null, risk: null, action: null, tool: null };
  switch (event.kind) {
    case "execution":
      return { ...none, language: event.language, status: event.status, risk: event.risk, action: event.action };
    case "tool_call":
      return { ...none, status: event.outcome, action: event.action, tool: event.tool };
    case "file":
      return { ...none, status: event.outcome, action: event.operation };
    case "approval":
      return { ...none, status: event.decision, action: event.subject };
    case "auth_failure":
      return { ...none, status: event.reason };
    case "policy_block":
      return { ...none, language: event.language ?? null, status: "blocked", risk: event.risk ?? null, action: "block", tool: event.tool ?? null };
    case "anomaly":
      return { ...none, status: event.rule };
  }
}

/**
 * SQLite stores text as UTF-8, so a lone surrogate (a tool name sandboxed code made up) would come
 * back as U+FFFD and its row's hash no longer match: columns are made well-formed before hashing.
 * (`data` is JSON, which escapes lone surrogates already.)
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const text = <T extends string | null>(value: T): T => (typeof value === "string" ? (value.replace(LONE_SURROGATE, "\ufffd") as T) : value);

export function columnsOf(event: GovernanceEvent): AuditColumns {
  const f = filed(event);
  const { data, large } = event.kind === "execution" ? splitCode(event as ExecutionEvent & Record<string, unknown>) : { data: JSON.stringify(event), large: undefined };
  return {
    time: event.time,
    kind: event.kind,
    client: text(event.client),
    session_id: text(event.sessionId ?? null),
    execution_id: text(event.executionId ?? null),
    language: text(f.language),
    status: text(f.status),
    risk: f.risk,
    action: text(f.action),
    tool: text(f.tool),
    data,
    ...(large !== undefined ? { large } : {}),
  };
}

/**
 * sha256(prev_hash || canonical JSON of the row's columns, id included, keys sorted || "\n" || data):
 * editing, deleting or reordering any row changes a hash that a later row (or the log's head)
 * recorded. `data` (already JSON) goes in as it is stored, last, so it is not escaped a second time.
 */
export function rowHash(prevHash: string, id: number, row: AuditColumns): string {
  // Keys in sorted order: JSON.stringify keeps insertion order, so this is the canonical form.
  const columns = JSON.stringify({
    action: row.action,
    client: row.client,
    execution_id: row.execution_id,
    id,
    kind: row.kind,
    language: row.language,
    risk: row.risk,
    session_id: row.session_id,
    status: row.status,
    time: row.time,
    tool: row.tool,
  });
  return createHash("sha256").update(prevHash).update(columns).update("\n").update(row.data).digest("hex");
}
