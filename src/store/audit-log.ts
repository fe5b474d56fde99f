// AuditLog: the event sink that writes governance events to the hash-chained SQLite log through an
// in-memory queue flushed in batches, pushing back on callers when full and never dropping a row.

import type { Statement } from "better-sqlite3";
import { SandgateError } from "../errors/index.js";
import type { EventSink, GovernanceEvent } from "./audit-events.js";
import type { Logger } from "../util/logger.js";
import { silentLogger } from "../util/logger.js";
import { openAuditWriter, readChainEnds, setMeta, type AuditDatabase } from "./audit-db.js";
import { queryAudit, type AuditPage, type AuditPageRequest } from "./audit-query.js";
import { applyRetention, type RetentionReport } from "./audit-retention.js";
import { CodeStore } from "./audit-code.js";
import { columnsOf, rowHash, type AuditColumns } from "./audit-row.js";
import { verifyAudit, type VerifyResult } from "./audit-verify.js";

export interface AuditLogOptions {
  path: string;
  /** Rows waiting to be written past which record() waits for room. */
  queueMax: number;
  /** How long record() waits for room before it rejects with AUDIT_UNAVAILABLE, milliseconds. */
  writeTimeoutMs: number;
  retentionDays: number;
  maxMb: number;
  /** Size pressure deletes no row younger than this, days (it alerts instead); default 7, as audit.minRetentionDays. */
  minRetentionDays?: number;
  /** Bytes of long programs one caller may add to audit_code per day, past which rows keep their first 2 KiB; default 64 MiB. */
  codeBudgetBytes?: number;
  log?: Logger;
}

/** Told after every batch written: how many rows and how long the transaction took. */
export type FlushObserver = (rows: number, ms: number) => void;

/**
 * What the server needs of an audit store: a sink for events that can be queried, verified,
 * observed and closed. AuditLog is the SQLite one; another database can implement the same.
 */
export interface AuditStore extends EventSink {
  query(request?: AuditPageRequest): AuditPage | Promise<AuditPage>;
  verify(): VerifyResult | Promise<VerifyResult>;
  onFlush(observer: FlushObserver): () => void;
  /** Writes everything accepted, then lets go of the database. */
  close(): Promise<void>;
}

interface Waiter {
  /** Absent for admit(): it waits for room without taking it. */
  row?: AuditColumns;
  resolve: () => void;
  timer: NodeJS.Timeout;
}

/** Rows per transaction: a batch holds the event loop for a few milliseconds at most. */
const BATCH = 1000;
/** ...and characters of events per transaction: 1000 runs of 1 MB programs would be one 1 GB transaction. */
export const BATCH_CHARS = 8 * 1048576;

/** How many of the first queued rows make the next batch (at least one). */
function batchSize(queue: readonly AuditColumns[]): number {
  let chars = 0;
  const most = Math.min(queue.length, BATCH);
  for (let n = 0; n < most; n += 1) {
    chars += (queue[n]?.data.length ?? 0) + (queue[n]?.large?.text.length ?? 0);
    if (chars > BATCH_CHARS && n > 0) return n;
  }
  return most;
}
/**
 * Least time from one transaction to the next while events keep coming: a row alone costs a
 * transaction (half a millisecond here, most of it the commit), so a busy server writes what
 * arrived meanwhile in one; an idle log still writes on the next turn of the event loop. At 10 ms
 * a loop of trivial session calls (200-400 a second here) spent a sixth of the host's CPU on
 * commits of two or three rows each; at 50 ms they hold a dozen or more.
 */
export const FLUSH_SPACING_MS = 50;
const RETENTION_EVERY_MS = 3_600_000;
const RETRY_FIRST_MS = 20;
const RETRY_MAX_MS = 1000;

export class AuditLog implements AuditStore {
  private readonly db: AuditDatabase;
  private readonly log: Logger;
  private queue: AuditColumns[] = [];
  private readonly waiting: Waiter[] = [];
  private readonly observers = new Set<FlushObserver>();
  private scheduled = false;
  /** When the last transaction ended (performance.now()); -Infinity before the first. */
  private lastFlushAt = -Infinity;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = RETRY_FIRST_MS;
  /** The write error of the current failure streak, logged once when it starts. */
  private failing: unknown;
  private readonly retentionTimer: NodeJS.Timeout;
  private closing: Promise<void> | undefined;
  /** What the last retention pass did (metrics, tests). */
  lastRetention: RetentionReport | undefined;
  /** Characters of event JSON written since retention last ran. */
  private writtenSinceRetention = 0;
  private readonly insert: Statement<[AuditColumns & { id: number; prev_hash: string; hash: string }]>;
  private readonly lastRow: Statement<[], { id: number; hash: string }>;
  private readonly writeBatch: (rows: AuditColumns[]) => void;

  constructor(private readonly options: AuditLogOptions) {
    this.log = options.log ?? silentLogger;
    this.db = openAuditWriter(options.path);
    this.insert = this.db.prepare<[AuditColumns & { id: number; prev_hash: string; hash: string }]>(
      "INSERT INTO audit (id, time, kind, client, session_id, execution_id, language, status, risk, action, tool, data, prev_hash, hash) " +
        "VALUES (@id, @time, @kind, @client, @session_id, @execution_id, @language, @status, @risk, @action, @tool, @data, @prev_hash, @hash)",
    );
    this.lastRow = this.db.prepare<[], { id: number; hash: string }>("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1");
    const code = new CodeStore(this.db, options.codeBudgetBytes ?? 64 * 1048576);
    // IMMEDIATE: a writer that cannot have the lock fails at BEGIN, before any work.
    const batch = this.db.transaction((rows: AuditColumns[]) => {
      let head = this.lastRow.get();
      if (!head) {
        const ends = readChainEnds(this.db);
        head = { id: ends.anchorId, hash: ends.anchorHash };
      }
      let { id, hash } = head;
      for (const { large, ...row } of rows) {
        id += 1;
        if (large !== undefined) row.data = code.place(id, row.client, row.time, row.data, large);
        const next = rowHash(hash, id, row);
        this.insert.run({ ...row, id, prev_hash: hash, hash: next });
        hash = next;
      }
      setMeta(this.db, { head_id: id, head_hash: hash });
    });
    this.writeBatch = (rows) => batch.immediate(rows);
    this.retain();
    this.retentionTimer = setInterval(() => this.retain(), RETENTION_EVERY_MS).unref();
  }

  /** Queues the event; the promise (only when the queue is full) settles once there is room, or rejects after writeTimeoutMs. */
  record(event: GovernanceEvent): void | Promise<void> {
    if (this.closing) return Promise.reject(new SandgateError("AUDIT_UNAVAILABLE", "the audit log is closed; sandgate is stopping"));
    const row = columnsOf(event);
    // A run's own row is taken past queueMax: its code ran once admit() found room, and the
    // sandbox caps bound how many runs end at once.
    if ((this.queue.length < this.options.queueMax && this.waiting.length === 0) || event.kind === "execution") {
      this.queue.push(row);
      this.schedule();
      return;
    }
    return this.wait(event.kind, row);
  }

  /** Undefined when the queue has room now; else settles once it has, or rejects after writeTimeoutMs. */
  admit(): void | Promise<void> {
    if (this.closing) return Promise.reject(new SandgateError("AUDIT_UNAVAILABLE", "the audit log is closed; sandgate is stopping"));
    if (this.queue.length < this.options.queueMax && this.waiting.length === 0) return;
    return this.wait("execution");
  }

  private wait(kind: string, row?: AuditColumns): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        ...(row ? { row } : {}),
        resolve,
        timer: setTimeout(() => {
          const at = this.waiting.indexOf(waiter);
          if (at >= 0) this.waiting.splice(at, 1);
          const why = this.failing instanceof Error ? `: ${this.failing.message}` : "";
          reject(
            new SandgateError("AUDIT_UNAVAILABLE", `the audit log could not take this ${kind} event within ${this.options.writeTimeoutMs / 1000} s (${this.queue.length} rows wait to be written${why}); the request fails rather than go unrecorded`, {
              data: { queued: this.queue.length, retry_after: 1 },
            }),
          );
        }, this.options.writeTimeoutMs),
      };
      this.waiting.push(waiter);
      this.schedule();
    });
  }

  /** Calls `observer` after every batch written (audit write latency); returns the unsubscribe. */
  onFlush(observer: FlushObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** Rows accepted and not yet written, and events waiting for room. */
  get backlog(): { queued: number; waiting: number } {
    return { queued: this.queue.length, waiting: this.waiting.length };
  }

  /** Rows accepted and not yet written are written first, so a reader sees every event recorded so far. */
  query(request: AuditPageRequest = {}): AuditPage {
    if (this.failing === undefined) this.flush();
    return queryAudit(this.db, request);
  }

  verify(): VerifyResult {
    if (this.failing === undefined) this.flush();
    return verifyAudit(this.db);
  }

  /** Writes what is queued now (tests, close); false when the database refused the batch. */
  flush(): boolean {
    while (this.queue.length > 0) {
      const size = batchSize(this.queue);
      const batch = size === this.queue.length ? this.queue : this.queue.slice(0, size);
      const t0 = performance.now();
      try {
        this.writeBatch(batch);
      } catch (error) {
        if (this.failing === undefined) this.log.error({ err: error, queued: this.queue.length }, "audit log write failed; rows stay queued and are retried");
        this.failing = error;
        return false;
      }
      this.lastFlushAt = performance.now();
      const ms = this.lastFlushAt - t0;
      for (const row of batch) this.writtenSinceRetention += row.data.length + (row.large?.text.length ?? 0);
      this.queue = batch === this.queue ? [] : this.queue.slice(batch.length);
      if (this.failing !== undefined) this.log.warn({ queued: this.queue.length }, "audit log writes again");
      this.failing = undefined;
      this.retryMs = RETRY_FIRST_MS;
      this.admitWaiting();
      for (const observer of this.observers) observer(batch.length, ms);
    }
    // The hourly check alone would let large events (1 MB of code each) grow the file without
    // bound in between: a quarter of maxMb written runs retention at once.
    if (this.writtenSinceRetention > (this.options.maxMb * 1048576) / 4) this.retain();
    return true;
  }

  /** Writes everything still queued or waiting, then closes the file. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.closeNow();
    return this.closing;
  }

  private async closeNow(): Promise<void> {
    clearInterval(this.retentionTimer);
    clearTimeout(this.retryTimer);
    // Waiting events are accepted now: close writes them all.
    this.admitWaiting(Infinity);
    const deadline = Date.now() + this.options.writeTimeoutMs;
    while (!this.flush()) {
      if (Date.now() >= deadline) {
        this.log.error({ lost: this.queue.length, err: this.failing }, "audit log closed with rows it could not write");
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    this.db.close();
  }

  private admitWaiting(room = this.options.queueMax): void {
    while (this.waiting.length > 0 && this.queue.length < room) {
      const waiter = this.waiting.shift();
      if (!waiter) break;
      clearTimeout(waiter.timer);
      if (waiter.row) this.queue.push(waiter.row);
      waiter.resolve();
    }
  }

  /**
   * A flush on the next turn of the event loop, or FLUSH_SPACING_MS after the last one when that
   * was more recent (at once when events wait for room), or after a back-off while writes fail.
   */
  private schedule(): void {
    if (this.scheduled || this.closing) return;
    this.scheduled = true;
    const run = (): void => {
      this.scheduled = false;
      this.retryTimer = undefined;
      if (this.closing) return;
      if (this.flush()) return;
      this.scheduled = true;
      this.retryTimer = setTimeout(run, this.retryMs).unref();
      // Several retries within the time a waiting event has, however short writeTimeoutS is.
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS, Math.max(RETRY_FIRST_MS, this.options.writeTimeoutMs / 4));
    };
    const spacing = this.waiting.length > 0 ? 0 : this.lastFlushAt + FLUSH_SPACING_MS - performance.now();
    if (this.failing === undefined && spacing <= 0) setImmediate(run);
    else if (this.failing === undefined) this.retryTimer = setTimeout(run, spacing);
    else {
      this.retryTimer = setTimeout(run, this.retryMs).unref();
    }
  }

  private retain(): void {
    this.writtenSinceRetention = 0;
    try {
      const { retentionDays, maxMb, minRetentionDays = 7 } = this.options;
      const report = applyRetention(this.db, { retentionDays, maxMb, minRetentionDays });
      this.lastRetention = report;
      if (report.early > 0) {
        this.log.warn({ deleted: report.deleted, early: report.early, maxMb }, `audit retention ran early: the log reached audit.maxMb (${maxMb} MiB), so ${report.early} rows younger than audit.retentionDays (${retentionDays}) were deleted; a retention row in the chain records it`);
      } else if (report.deleted > 0) this.log.info({ deleted: report.deleted }, "audit retention deleted old rows; a retention row in the chain records it");
      if (report.overCap) {
        this.log.error({ maxMb, minRetentionDays }, `the audit log is over audit.maxMb (${maxMb} MiB) but every row left is younger than audit.minRetentionDays (${minRetentionDays}): nothing more is deleted; raise maxMb or find who fills it (sandgate audit --kind execution)`);
      }
    } catch (error) {
      this.log.warn({ err: error }, "audit retention could not run; it retries within the hour");
    }
  }
}
