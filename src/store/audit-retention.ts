// Retention of the audit log: the oldest rows go when older than retentionDays, or while the file is
// over maxMb but only rows older than minRetentionDays; each deletion leaves a chained retention row.

import type { AuditDatabase } from "./audit-db.js";
import { readChainEnds, setMeta } from "./audit-db.js";
import { pruneCode } from "./audit-code.js";
import { rowHash, type AuditColumns } from "./audit-row.js";

export interface RetentionOptions {
  retentionDays: number;
  maxMb: number;
  /**
   * Size pressure never deletes rows younger than this: whoever may run code could otherwise fill
   * the log on purpose and so erase what came before (1 MiB programs did it in two minutes).
   */
  minRetentionDays: number;
  now?: number;
}

/** What one pass did: rows deleted by age and by size, and whether the file is still over maxMb. */
export interface RetentionReport {
  deleted: number;
  /** Rows deleted for size, younger than retentionDays: retention ran early. */
  early: number;
  /** Still over maxMb with every row left younger than minRetentionDays: nothing more was deleted. */
  overCap: boolean;
}

/** The row each deletion appends to the chain: what went, and the anchor it replaced. */
export interface RetentionEvent {
  kind: "retention";
  time: number;
  client: "sandgate";
  reason: "age" | "size";
  deleted: number;
  fromId: number;
  toId: number;
  previousAnchorId: number;
  previousAnchorHash: string;
}

/** Rows deleted per transaction, so the writer is never shut out for long. */
const CHUNK = 5000;
const DAY_MS = 86_400_000;

/** Bytes of pages that hold data (free pages left by deletions do not count). */
export function usedBytes(db: AuditDatabase): number {
  const pageSize = db.pragma("page_size", { simple: true }) as number;
  const pages = db.pragma("page_count", { simple: true }) as number;
  const free = db.pragma("freelist_count", { simple: true }) as number;
  return (pages - free) * pageSize;
}

/** Appends `event` at the head of the chain (inside the caller's transaction). */
function appendRetention(db: AuditDatabase, event: RetentionEvent): void {
  const last = db.prepare("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1").get() as { id: number; hash: string } | undefined;
  const ends = readChainEnds(db);
  const head = last ?? { id: ends.anchorId, hash: ends.anchorHash };
  const row: AuditColumns = {
    time: event.time,
    kind: "retention",
    client: event.client,
    session_id: null,
    execution_id: null,
    language: null,
    status: event.reason,
    risk: null,
    action: null,
    tool: null,
    data: JSON.stringify(event),
  };
  const id = head.id + 1;
  const hash = rowHash(head.hash, id, row);
  db.prepare(
    "INSERT INTO audit (id, time, kind, client, session_id, execution_id, language, status, risk, action, tool, data, prev_hash, hash) " +
      "VALUES (@id, @time, @kind, @client, @session_id, @execution_id, @language, @status, @risk, @action, @tool, @data, @prev_hash, @hash)",
  ).run({ ...row, id, prev_hash: head.hash, hash });
  setMeta(db, { head_id: id, head_hash: hash });
}

/**
 * Deletes the rows with id <= `lastId` (a prefix of the chain), anchors the chain on the last one
 * and, in the same transaction, appends the retention row that says so.
 */
function deleteThrough(db: AuditDatabase, lastId: number, reason: RetentionEvent["reason"], now: number): number {
  const last = db.prepare("SELECT id, hash FROM audit WHERE id <= ? ORDER BY id DESC LIMIT 1").get(lastId) as { id: number; hash: string } | undefined;
  if (!last) return 0;
  return db.transaction(() => {
    const before = readChainEnds(db);
    const fromId = firstId(db);
    const { changes } = db.prepare("DELETE FROM audit WHERE id <= ?").run(last.id);
    setMeta(db, { anchor_id: last.id, anchor_hash: last.hash });
    pruneCode(db, last.id, now);
    appendRetention(db, { kind: "retention", time: now, client: "sandgate", reason, deleted: changes, fromId, toId: last.id, previousAnchorId: before.anchorId, previousAnchorHash: before.anchorHash });
    return changes;
  })();
}

/** Applies both limits. */
export function applyRetention(db: AuditDatabase, options: RetentionOptions): RetentionReport {
  const now = options.now ?? Date.now();
  let deleted = 0;
  let early = 0;
  const cutoff = now - options.retentionDays * DAY_MS;
  // The rows before the first one young enough to keep: a prefix of the chain (a clock that went back only keeps a row longer).
  const through = prefixOlderThan(db, cutoff);
  if (through !== null) {
    for (let first = firstId(db); first > 0 && first <= through; first = firstId(db)) {
      const n = deleteThrough(db, Math.min(through, first + CHUNK - 1), "age", now);
      if (n === 0) break;
      deleted += n;
    }
  }
  const limit = options.maxMb * 1048576;
  // Size pressure reaches no further than rows older than minRetentionDays.
  const sizeThrough = prefixOlderThan(db, now - options.minRetentionDays * DAY_MS);
  let overCap = false;
  for (let round = 0; round < 1000 && usedBytes(db) > limit; round++) {
    const first = firstId(db);
    if (sizeThrough === null || first === 0 || first > sizeThrough) {
      overCap = first !== 0 || usedBytes(db) > limit;
      break;
    }
    const count = (db.prepare("SELECT count(*) AS n FROM audit").get() as { n: number }).n;
    const used = usedBytes(db);
    const share = Math.ceil((count * (used - limit)) / used);
    const n = deleteThrough(db, Math.min(sizeThrough, first + Math.min(CHUNK, Math.max(1, share)) - 1), "size", now);
    if (n === 0) break;
    deleted += n;
    early += n;
  }
  if (deleted > 0) {
    // Gives freed pages back to the disk (auto_vacuum = INCREMENTAL) and folds the WAL into the file.
    db.pragma("incremental_vacuum");
    db.pragma("wal_checkpoint(TRUNCATE)");
  }
  return { deleted, early, overCap };
}

/** The last id of the rows before the first one at or after `time`; null when there are none. */
function prefixOlderThan(db: AuditDatabase, time: number): number | null {
  const young = (db.prepare("SELECT min(id) AS id FROM audit WHERE time >= ?").get(time) as { id: number | null }).id;
  if (young !== null) return young - 1;
  return (db.prepare("SELECT max(id) AS id FROM audit").get() as { id: number | null }).id;
}

function firstId(db: AuditDatabase): number {
  return (db.prepare("SELECT min(id) AS id FROM audit").get() as { id: number | null }).id ?? 0;
}
