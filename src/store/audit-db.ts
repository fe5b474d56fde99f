// The audit log's SQLite file: where it lives, how it is opened (WAL, owner-only modes), its rows
// table with an index per filter, long programs by hash, and the meta table of the chain's ends.

import { chmodSync, closeSync, constants, existsSync, lstatSync, mkdirSync, openSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import Database, { type Statement } from "better-sqlite3";
import { SandgateError } from "../errors/index.js";
import { CODE_SCHEMA } from "./audit-code.js";
import { GENESIS_HASH } from "./audit-row.js";

export type AuditDatabase = Database.Database;

/** What the -wal file is cut back to after a checkpoint, bytes. */
const WAL_KEPT_BYTES = 64 * 1048576;

/** The audit path of a config: audit.path, else SANDBOX_DIR/audit/audit.db. */
export function auditPathOf(config: { sandboxDir: string; audit: { path?: string | undefined } }): string {
  return resolve(config.audit.path ?? join(config.sandboxDir, "audit", "audit.db"));
}

/**
 * One row per event. The columns that pick out few rows (time, client, session, execution, tool)
 * are indexed; kind, language, status and risk are filtered while scanning newest first, because
 * every index costs each write a page (measured: 9 indexes double a one-row transaction's time).
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit (
  id INTEGER PRIMARY KEY,
  time INTEGER NOT NULL,
  kind TEXT NOT NULL,
  client TEXT NOT NULL,
  session_id TEXT,
  execution_id TEXT,
  language TEXT,
  status TEXT,
  risk REAL,
  action TEXT,
  tool TEXT,
  data TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_time ON audit (time);
CREATE INDEX IF NOT EXISTS audit_client ON audit (client);
CREATE INDEX IF NOT EXISTS audit_session ON audit (session_id) WHERE session_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS audit_execution ON audit (execution_id) WHERE execution_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS audit_tool ON audit (tool) WHERE tool IS NOT NULL;
CREATE TABLE IF NOT EXISTS audit_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/**
 * Opens (creating) the log for writing. Busy waits are off (timeout 0): a locked file fails the
 * write at once and the writer retries on a timer, rather than block the event loop.
 */
export function openAuditWriter(path: string): AuditDatabase {
  // Only a directory made here is set to 0700: audit.path may name a file in a directory others share.
  if (mkdirSync(dirname(path), { recursive: true, mode: 0o700 }) !== undefined) chmodSync(dirname(path), 0o700);
  refuseForeign(path);
  const fresh = !existsSync(path);
  // Created 0600 here, not by SQLite with the umask's mode and chmodded after: in a shared
  // directory someone could open it in between and keep reading. SQLite gives -wal and -shm its mode.
  if (fresh) closeSync(openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600));
  const db = new Database(path, { timeout: 0 });
  try {
    chmodSync(path, 0o600);
    // Set before the first table exists: deleted rows' pages can then be given back to the disk.
    if (fresh) db.pragma("auto_vacuum = INCREMENTAL");
    db.pragma("journal_mode = WAL");
    // NORMAL in WAL mode syncs at checkpoints, not at every commit: a power loss or OS crash may lose
    // the last commits (the rows in flight), never corrupt the file; a crash of sandgate alone loses nothing committed.
    db.pragma("synchronous = NORMAL");
    // A checkpoint leaves the -wal file as large as the largest batch ever written unless told otherwise.
    db.pragma(`journal_size_limit = ${WAL_KEPT_BYTES}`);
    db.exec(SCHEMA);
    db.exec(CODE_SCHEMA);
    // Retention rows exist from here on: an anchor moved past this without one was moved by hand.
    const since = db.prepare("SELECT value FROM audit_meta WHERE key = 'retention_rows_since'").get();
    if (since === undefined) setMeta(db, { retention_rows_since: readChainEnds(db).anchorId });
    ownerOnly(path);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** Opens an existing log to read (the CLI, while a server may be writing: WAL lets both go on). */
export function openAuditReader(path: string): AuditDatabase {
  refuseForeign(path);
  const db = new Database(path, { fileMustExist: true, timeout: 5000 });
  db.pragma("journal_mode = WAL");
  ownerOnly(path);
  return db;
}

/**
 * SQLite follows symbolic links and writes through hard links, and sandgate often runs as root: a
 * link planted at the log or its -wal/-shm/-journal (audit.path in a shared directory) would have
 * rows written over another file, and a file someone else owns would let them read every row.
 */
function refuseForeign(path: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) {
    let stat;
    try {
      stat = lstatSync(path + suffix);
    } catch {
      continue;
    }
    const why = stat.isSymbolicLink()
      ? "is a symbolic link"
      : !stat.isFile()
        ? "is not a regular file"
        : stat.nlink > 1
          ? "has other hard links"
          : process.getuid !== undefined && stat.uid !== process.getuid()
            ? `belongs to another user (uid ${stat.uid})`
            : undefined;
    if (why !== undefined) {
      throw new SandgateError("CONFIG_INVALID", `the audit log ${path + suffix} ${why}; sandgate writes its audit log only to a plain file of its own: remove it or set audit.path elsewhere`);
    }
  }
}

/** The WAL and shared-memory files hold rows too: as private as the log (they come and go with connections). */
function ownerOnly(path: string): void {
  for (const suffix of ["-wal", "-shm"]) if (existsSync(path + suffix)) chmodSync(path + suffix, 0o600);
}

export interface ChainEnds {
  /** The hash the oldest kept row chains from: GENESIS_HASH, or the last row retention deleted. */
  anchorHash: string;
  anchorId: number;
  /** The newest row written, as the writer recorded it (absent before the first write). */
  headHash?: string;
  headId?: number;
}

export function readChainEnds(db: AuditDatabase): ChainEnds {
  const meta = new Map((db.prepare("SELECT key, value FROM audit_meta").all() as { key: string; value: string }[]).map((r) => [r.key, r.value]));
  const headId = meta.get("head_id");
  const headHash = meta.get("head_hash");
  return {
    anchorHash: meta.get("anchor_hash") ?? GENESIS_HASH,
    anchorId: Number(meta.get("anchor_id") ?? 0),
    ...(headId !== undefined && headHash !== undefined ? { headId: Number(headId), headHash } : {}),
  };
}

const metaWriters = new WeakMap<AuditDatabase, Statement<[string, string]>>();

export function setMeta(db: AuditDatabase, entries: Record<string, string | number>): void {
  let put = metaWriters.get(db);
  if (!put) {
    put = db.prepare<[string, string]>("INSERT INTO audit_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    metaWriters.set(db, put);
  }
  for (const [key, value] of Object.entries(entries)) put.run(key, String(value));
}
