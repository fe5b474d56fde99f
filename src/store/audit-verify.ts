// `sandgate audit verify`: walks the log from its anchor, recomputing every row's hash, and names
// the first row that was edited, deleted or moved.

import type { AuditDatabase } from "./audit-db.js";
import { readChainEnds } from "./audit-db.js";
import { rowHash, type AuditRow } from "./audit-row.js";

export type VerifyResult = { ok: true; rows: number } | { ok: false; rows: number; badId: number; reason: string };

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
  const bad = (badId: number, reason: string): VerifyResult => ({ ok: false, rows, badId, reason });
  for (const row of db.prepare("SELECT * FROM audit ORDER BY id").iterate() as IterableIterator<AuditRow>) {
    if (row.id !== prevId + 1) {
      return bad(prevId + 1, row.id > prevId + 1 ? `row ${prevId + 1} is missing (deleted)` : `row ${row.id} is out of order`);
    }
    if (row.prev_hash !== prevHash) return bad(row.id, `row ${row.id} does not chain to the row before it (that row was changed or removed)`);
    if (rowHash(prevHash, row.id, row) !== row.hash) return bad(row.id, `row ${row.id} was changed after it was written (its hash does not match its content)`);
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
  return { ok: true, rows };
}
