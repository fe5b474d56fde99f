// `sandgate audit verify`: walks the log from its anchor, recomputing every row's hash, names the
// first row that was edited, deleted or moved, and reports the deletions retention recorded.

import type { AuditDatabase } from "./audit-db.js";
import { readChainEnds } from "./audit-db.js";
import { badStoredCode } from "./audit-code.js";
import type { RetentionEvent } from "./audit-retention.js";
import { rowHash, type AuditRow } from "./audit-row.js";

/** The retention rows kept in the chain: how many, the rows they deleted, and the latest one. */
export interface RetentionSummary {
  events: number;
  deleted: number;
  /** Rows deleted for size before retentionDays (retention ran early). */
  early: number;
  last: { id: number; time: string; reason: RetentionEvent["reason"]; deleted: number; from_id: number; to_id: number };
}

export type VerifyResult = { ok: true; rows: number; retention?: RetentionSummary } | { ok: false; rows: number; badId: number; reason: string };

/** Checks the whole chain in id order, one row in memory at a time. */
export function verifyAudit(db: AuditDatabase): VerifyResult {
  const tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name));
  for (const table of ["audit", "audit_meta"]) {
    if (!tables.has(table)) return { ok: false, rows: 0, badId: 0, reason: `the table ${table} is missing (dropped): the log was tampered with` };
  }
  const ends = readChainEnds(db);
  let prevHash = ends.anchorHash;
  let prevId = ends.anchorId;
  let rows = 0;
  let retention: RetentionSummary | undefined;
  /** Whether a kept retention row names the anchor as the last row it deleted. */
  let anchorRecorded = false;
  const hasCode = tables.has("audit_code") ? db.prepare<[string], { one: number }>("SELECT 1 AS one FROM audit_code WHERE hash = ?") : undefined;
  const bad = (badId: number, reason: string): VerifyResult => ({ ok: false, rows, badId, reason });
  for (const row of db.prepare("SELECT * FROM audit ORDER BY id").iterate() as IterableIterator<AuditRow>) {
    if (row.id !== prevId + 1) {
      return bad(prevId + 1, row.id > prevId + 1 ? `row ${prevId + 1} is missing (deleted)` : `row ${row.id} is out of order`);
    }
    if (row.prev_hash !== prevHash) return bad(row.id, `row ${row.id} does not chain to the row before it (that row was changed or removed)`);
    if (rowHash(prevHash, row.id, row) !== row.hash) return bad(row.id, `row ${row.id} was changed after it was written (its hash does not match its content)`);
    if (row.kind === "retention") {
      const event = JSON.parse(row.data) as RetentionEvent;
      if (event.toId === ends.anchorId) anchorRecorded = true;
      retention = {
        events: (retention?.events ?? 0) + 1,
        deleted: (retention?.deleted ?? 0) + event.deleted,
        early: (retention?.early ?? 0) + (event.reason === "size" ? event.deleted : 0),
        last: { id: row.id, time: new Date(event.time).toISOString(), reason: event.reason, deleted: event.deleted, from_id: event.fromId, to_id: event.toId },
      };
    } else if (row.kind === "execution" && row.data.includes('"codeStored":"by_hash"')) {
      const { codeHash } = JSON.parse(row.data) as { codeHash: string };
      if (hasCode?.get(codeHash) === undefined) return bad(row.id, `the program of row ${row.id} (sha256 ${codeHash}) is missing from audit_code (deleted)`);
    }
    prevHash = row.hash;
    prevId = row.id;
    rows++;
  }
  // The writer records the head in the transaction of every write: rows (or an anchor, left by
  // retention) without one mean it was deleted, perhaps to hide rows deleted from the end.
  if (ends.headId === undefined && (rows > 0 || ends.anchorId > 0)) {
    return bad(prevId, "the log's recorded head (its last row) is missing from audit_meta: rows may have been deleted from the end");
  }
  if (ends.headId !== undefined && (ends.headId !== prevId || ends.headHash !== prevHash)) {
    const id = ends.headId > prevId ? prevId + 1 : ends.headId;
    return bad(id, ends.headId > prevId ? `rows ${prevId + 1} to ${ends.headId} are missing (deleted from the end)` : `the log's recorded head (row ${ends.headId}) does not match its last row`);
  }
  // Retention appends a row naming the anchor in the transaction that moves it (logs older than that row kind excepted).
  const since = db.prepare("SELECT value FROM audit_meta WHERE key = 'retention_rows_since'").get() as { value: string } | undefined;
  if (ends.anchorId > Number(since?.value ?? ends.anchorId) && !anchorRecorded) {
    return bad(ends.anchorId + 1, `rows up to ${ends.anchorId} were deleted without a retention row saying so: the chain's anchor was moved by hand`);
  }
  if (tables.has("audit_code")) {
    const changed = badStoredCode(db);
    if (changed !== undefined) return bad(0, `the stored program ${changed} in audit_code was changed (its text does not hash to its key)`);
  }
  return { ok: true, rows, ...(retention !== undefined ? { retention } : {}) };
}
