// Programs of the audit log kept once by sha256 in their own table, within a daily budget per
// caller: past it a run's row keeps its first INLINE_CODE_CHARS characters and says what was cut.

import { createHash } from "node:crypto";
import type { AuditDatabase } from "./audit-db.js";

/**
 * Code up to this many characters stays in its row (most programs); longer code goes to audit_code.
 * Measured reason: 1 MiB programs of a comment and `1` used to flush the log through size retention.
 */
export const INLINE_CODE_CHARS = 2048;

export const CODE_SCHEMA = `
CREATE TABLE IF NOT EXISTS audit_code (
  hash TEXT PRIMARY KEY,
  code TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  last_id INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_code_last ON audit_code (last_id);
CREATE TABLE IF NOT EXISTS audit_code_budget (client TEXT NOT NULL, day INTEGER NOT NULL, bytes INTEGER NOT NULL, PRIMARY KEY (client, day));
`;

/** A run's program too long for its row: where it goes is decided when the row is written. */
export interface LargeCode {
  hash: string;
  text: string;
  bytes: number;
  /** The row's data when the caller's budget is spent: the first characters and a note. */
  truncatedData: string;
}

/** How a run's row holds its code, in the event's JSON: absent when the code is inline. */
export type CodeStored = "by_hash" | "truncated";

/**
 * The row's data for a run and, for long code, the program apart: `data` then names the code by
 * its hash (the chain covers the hash, and verify checks the stored code against it).
 */
export function splitCode(event: { code: string; codeHash: string } & Record<string, unknown>): { data: string; large?: LargeCode } {
  if (event.code.length <= INLINE_CODE_CHARS) return { data: JSON.stringify(event) };
  const bytes = Buffer.byteLength(event.code);
  const hash = createHash("sha256").update(event.code).digest("hex");
  const { code, ...rest } = event;
  const byHash = { ...rest, codeHash: hash, codeStored: "by_hash" satisfies CodeStored, codeBytes: bytes };
  const truncated = {
    ...rest,
    codeHash: hash,
    code: code.slice(0, INLINE_CODE_CHARS),
    codeStored: "truncated" satisfies CodeStored,
    codeBytes: bytes,
    codeNote: `truncated: the first ${INLINE_CODE_CHARS} characters of ${bytes} bytes are kept, because this caller's audit.codeBudgetMbPerDay was spent`,
  };
  return { data: JSON.stringify(byHash), large: { hash, text: code, bytes, truncatedData: JSON.stringify(truncated) } };
}

/** Puts long programs in audit_code inside the writer's transaction and says which data the row keeps. */
export class CodeStore {
  private readonly has;
  private readonly touch;
  private readonly insert;
  private readonly spent;
  private readonly spend;

  constructor(
    db: AuditDatabase,
    private readonly budgetBytes: number,
  ) {
    this.has = db.prepare<[string], { one: number }>("SELECT 1 AS one FROM audit_code WHERE hash = ?");
    this.touch = db.prepare<[number, string]>("UPDATE audit_code SET last_id = ? WHERE hash = ?");
    this.insert = db.prepare<[string, string, number, number]>("INSERT INTO audit_code (hash, code, bytes, last_id) VALUES (?, ?, ?, ?)");
    this.spent = db.prepare<[string, number], { bytes: number }>("SELECT bytes FROM audit_code_budget WHERE client = ? AND day = ?");
    this.spend = db.prepare<[string, number, number]>(
      "INSERT INTO audit_code_budget (client, day, bytes) VALUES (?, ?, ?) ON CONFLICT(client, day) DO UPDATE SET bytes = bytes + excluded.bytes",
    );
  }

  /** The data row `id` keeps: by hash when the code is stored already or fits the caller's budget of the day. */
  place(id: number, client: string, time: number, data: string, large: LargeCode): string {
    // Code seen before costs nothing: the same program run again is one more reference.
    if (this.has.get(large.hash) !== undefined) {
      this.touch.run(id, large.hash);
      return data;
    }
    const day = Math.floor(time / 86_400_000);
    const spent = this.spent.get(client, day)?.bytes ?? 0;
    if (spent + large.bytes > this.budgetBytes) return large.truncatedData;
    this.insert.run(large.hash, large.text, large.bytes, id);
    this.spend.run(client, day, large.bytes);
    return data;
  }
}

/** A run's event with its program back in place of the hash (queries and exports). */
export function withStoredCode(db: AuditDatabase): (event: Record<string, unknown>) => Record<string, unknown> {
  // A log written before programs were kept apart has no such table (the CLI reads it as it is).
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit_code'").get() === undefined) return (event) => event;
  const get = db.prepare<[string], { code: string }>("SELECT code FROM audit_code WHERE hash = ?");
  return (event) => {
    if (event.kind !== "execution" || event.codeStored !== "by_hash" || typeof event.codeHash !== "string") return event;
    const row = get.get(event.codeHash);
    return { ...event, code: row?.code ?? "" };
  };
}

/** Programs no kept row names any more (every row through `lastId` is gone), and budgets of days past. */
export function pruneCode(db: AuditDatabase, lastId: number, now: number): void {
  db.prepare("DELETE FROM audit_code WHERE last_id <= ?").run(lastId);
  db.prepare("DELETE FROM audit_code_budget WHERE day < ?").run(Math.floor(now / 86_400_000) - 1);
}

/** The first stored program whose text does not hash to its key, or undefined. */
export function badStoredCode(db: AuditDatabase): string | undefined {
  for (const row of db.prepare("SELECT hash, code FROM audit_code").iterate() as IterableIterator<{ hash: string; code: string }>) {
    if (createHash("sha256").update(row.code).digest("hex") !== row.hash) return row.hash;
  }
  return undefined;
}
