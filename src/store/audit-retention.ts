// Retention of the audit log: the oldest rows go when they are older than retentionDays or the file
// is over maxMb. The last deleted row's hash becomes the chain's anchor, so verification still passes.

import type { AuditDatabase } from "./audit-db.js";
import { setMeta } from "./audit-db.js";

export interface RetentionOptions {
  retentionDays: number;
  maxMb: number;
  now?: number;
}

/** Rows deleted per transaction, so the writer is never shut out for long. */
const CHUNK = 5000;

/** Bytes of pages that hold data (free pages left by deletions do not count). */
export function usedBytes(db: AuditDatabase): number {
  const pageSize = db.pragma("page_size", { simple: true }) as number;
  const pages = db.pragma("page_count", { simple: true }) as number;
  const free = db.pragma("freelist_count", { simple: true }) as number;
  return (pages - free) * pageSize;
}

/** Deletes the rows with id <= `lastId` (a prefix of the chain) and anchors the chain on the last one. */
function deleteThrough(db: AuditDatabase, lastId: number): number {
  const last = db.prepare("SELECT id, hash FROM audit WHERE id <= ? ORDER BY id DESC LIMIT 1").get(lastId) as { id: number; hash: string } | undefined;
  if (!last) return 0;
  return db.transaction(() => {
    const { changes } = db.prepare("DELETE FROM audit WHERE id <= ?").run(last.id);
    setMeta(db, { anchor_id: last.id, anchor_hash: last.hash });
    return changes;
  })();
}

/** Applies both limits; returns how many rows were deleted. */
export function applyRetention(db: AuditDatabase, options: RetentionOptions): number {
  let deleted = 0;
  const cutoff = (options.now ?? Date.now()) - options.retentionDays * 86_400_000;
  // The rows before the first one young enough to keep: a prefix of the chain (a clock that went back only keeps a row longer).
  const young = (db.prepare("SELECT min(id) AS id FROM audit WHERE time >= ?").get(cutoff) as { id: number | null }).id;
  const through = young === null ? (db.prepare("SELECT max(id) AS id FROM audit").get() as { id: number | null }).id : young - 1;
  if (through !== null) {
    for (let first = firstId(db); first > 0 && first <= through; first = firstId(db)) {
      const n = deleteThrough(db, Math.min(through, first + CHUNK - 1));
      if (n === 0) break;
      deleted += n;
    }
  }
  const limit = options.maxMb * 1048576;
  for (let round = 0; round < 1000 && usedBytes(db) > limit; round++) {
    const count = (db.prepare("SELECT count(*) AS n FROM audit").get() as { n: number }).n;
    if (count === 0) break;
    const used = usedBytes(db);
    const share = Math.ceil((count * (used - limit)) / used);
    deleted += deleteThrough(db, firstId(db) + Math.min(CHUNK, Math.max(1, share)) - 1);
  }
  if (deleted > 0) {
    // Gives freed pages back to the disk (auto_vacuum = INCREMENTAL) and folds the WAL into the file.
    db.pragma("incremental_vacuum");
    db.pragma("wal_checkpoint(TRUNCATE)");
  }
  return deleted;
}

function firstId(db: AuditDatabase): number {
  return (db.prepare("SELECT min(id) AS id FROM audit").get() as { id: number | null }).id ?? 0;
}
