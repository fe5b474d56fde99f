// Reading the audit log: filtered, paged queries (newest first by default, cursor = last id) and
// an export that streams every matching row in id order with constant memory.

import type { GovernanceEvent } from "./audit-events.js";
import type { AuditDatabase } from "./audit-db.js";
import { withStoredCode } from "./audit-code.js";
import type { RetentionEvent } from "./audit-retention.js";
import type { AuditRow } from "./audit-row.js";

export const AUDIT_PAGE_DEFAULT = 100;
export const AUDIT_PAGE_MAX = 1000;
/** Characters of events a page holds at most (at least one row), so a page of big programs stays a few MB. */
export const AUDIT_PAGE_MAX_BYTES = 4 * 1048576;

export interface AuditFilter {
  /** Milliseconds since the epoch, inclusive. */
  since?: number;
  /** Milliseconds since the epoch, exclusive. */
  until?: number;
  sessionId?: string;
  client?: string;
  status?: string;
  language?: string;
  tool?: string;
  kind?: string;
  /** Rows with risk >= this (only executions and policy blocks carry a risk). */
  minRisk?: number;
}

export interface AuditPageRequest extends AuditFilter {
  limit?: number;
  /** The last id of the previous page. */
  cursor?: number;
  order?: "desc" | "asc";
}

/** A row as queries and exports give it: the columns, the event, and its place in the chain. */
export interface AuditRecord extends Omit<AuditRow, "time" | "data" | "large"> {
  /** ISO 8601. */
  time: string;
  /** A governance event, or a retention row the log wrote itself. */
  event: GovernanceEvent | RetentionEvent;
}

export interface AuditPage {
  rows: AuditRecord[];
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: number | null;
}

function where(filter: AuditFilter): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const add = (clause: string, value: unknown): void => {
    clauses.push(clause);
    params.push(value);
  };
  if (filter.since !== undefined) add("time >= ?", filter.since);
  if (filter.until !== undefined) add("time < ?", filter.until);
  if (filter.sessionId !== undefined) add("session_id = ?", filter.sessionId);
  if (filter.client !== undefined) add("client = ?", filter.client);
  if (filter.status !== undefined) add("status = ?", filter.status);
  if (filter.language !== undefined) add("language = ?", filter.language);
  if (filter.tool !== undefined) add("tool = ?", filter.tool);
  if (filter.kind !== undefined) add("kind = ?", filter.kind);
  if (filter.minRisk !== undefined) add("risk >= ?", filter.minRisk);
  return { sql: clauses.length > 0 ? clauses.join(" AND ") : "1", params };
}

/** A row for the reader: a run whose program is kept by hash gets it back in `code`. */
function recordOf(db: AuditDatabase): (row: AuditRow) => AuditRecord {
  const code = withStoredCode(db);
  return (row) => {
    const { data, time, ...columns } = row;
    return { ...columns, time: new Date(time).toISOString(), event: code(JSON.parse(data) as Record<string, unknown>) as unknown as AuditRecord["event"] };
  };
}

/** The size of a program kept by hash, which the row gets back when read. */
function storedCodeChars(row: AuditRow): number {
  if (row.kind !== "execution" || !row.data.includes('"codeStored":"by_hash"')) return 0;
  const { codeBytes } = JSON.parse(row.data) as { codeBytes?: unknown };
  return typeof codeBytes === "number" ? codeBytes : 0;
}

/** One page of matching rows. */
export function queryAudit(db: AuditDatabase, request: AuditPageRequest = {}): AuditPage {
  const limit = Math.min(Math.max(1, Math.floor(request.limit ?? AUDIT_PAGE_DEFAULT)), AUDIT_PAGE_MAX);
  const order = request.order ?? "desc";
  const { sql, params } = where(request);
  const cursor = request.cursor === undefined ? "" : order === "desc" ? " AND id < ?" : " AND id > ?";
  const rows = db
    .prepare(`SELECT * FROM audit WHERE ${sql}${cursor} ORDER BY id ${order === "desc" ? "DESC" : "ASC"} LIMIT ?`)
    .iterate(...params, ...(request.cursor === undefined ? [] : [request.cursor]), limit + 1) as IterableIterator<AuditRow>;
  const page: AuditRow[] = [];
  let bytes = 0;
  let more = false;
  for (const row of rows) {
    // Rows keep whole programs (up to 1 MB each): a page stops at AUDIT_PAGE_MAX_BYTES, its cursor going on from there.
    const size = row.data.length + storedCodeChars(row);
    if (page.length >= limit || (page.length > 0 && bytes + size > AUDIT_PAGE_MAX_BYTES)) {
      more = true;
      break;
    }
    bytes += size;
    page.push(row);
  }
  const last = page[page.length - 1];
  return { rows: page.map(recordOf(db)), next_cursor: more && last ? last.id : null };
}

/** Every matching row, oldest first, read one at a time from the database. */
export function* exportAudit(db: AuditDatabase, filter: AuditFilter = {}): Generator<AuditRecord> {
  const { sql, params } = where(filter);
  const toRecord = recordOf(db);
  for (const row of db.prepare(`SELECT * FROM audit WHERE ${sql} ORDER BY id`).iterate(...params) as IterableIterator<AuditRow>) yield toRecord(row);
}
