// `sandgate audit`: query the audit log (a table, --json or --jsonl), `audit verify` (walk the hash
// chain; exit 1 naming the first bad row) and `audit export` (every row as JSON lines, streamed).
// It reads the SQLite file directly, also while the server writes to it (WAL).

import { existsSync } from "node:fs";
import { once } from "node:events";
import type { SandgateConfig } from "../config/index.js";
import { SandgateError } from "../errors/index.js";
import type { CliIo } from "./io.js";
import { printable } from "./printable.js";
import {
  AUDIT_PAGE_MAX,
  auditPathOf,
  checkAuditFilter,
  exportAudit,
  openAuditReader,
  parseTimeBound,
  queryAudit,
  verifyAudit,
  type AuditDatabase,
  type AuditFilter,
  type AuditRecord,
} from "../store/index.js";

export interface AuditOptions {
  action?: string;
  since?: string;
  until?: string;
  session?: string;
  client?: string;
  status?: string;
  language?: string;
  tool?: string;
  kind?: string;
  minRisk?: string;
  limit?: string;
  cursor?: string;
  json?: boolean;
  jsonl?: boolean;
}

function whole(text: string | undefined, flag: string, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) > max) throw new SandgateError("INVALID_INPUT", `--${flag} ${text} is not a whole number${max < Number.MAX_SAFE_INTEGER ? ` from 0 to ${max}` : ""}`);
  return Number(text);
}

function filterOf(options: AuditOptions): AuditFilter {
  const minRisk = whole(options.minRisk, "min-risk", 100);
  const filter: AuditFilter = {
    ...(options.since !== undefined ? { since: parseTimeBound(options.since, "--since") } : {}),
    ...(options.until !== undefined ? { until: parseTimeBound(options.until, "--until") } : {}),
    ...(options.session !== undefined ? { sessionId: options.session } : {}),
    ...(options.client !== undefined ? { client: options.client } : {}),
    ...(options.status !== undefined ? { status: options.status } : {}),
    ...(options.language !== undefined ? { language: options.language } : {}),
    ...(options.tool !== undefined ? { tool: options.tool } : {}),
    ...(options.kind !== undefined ? { kind: options.kind } : {}),
    ...(minRisk !== undefined ? { minRisk } : {}),
  };
  return checkAuditFilter(filter, (name) => `--${name.replace("_", "-")}`);
}

/** What a row is about, in a few words, for the table. */
function subject(row: AuditRecord): string {
  const event = row.event;
  switch (event.kind) {
    case "execution":
      return `${event.durationMs} ms, ${JSON.stringify((event.code.split("\n")[0] ?? "").slice(0, 60))}`;
    case "tool_call":
      return `${event.tool} ${event.durationMs} ms`;
    case "file":
      return `${event.operation} ${event.path}${event.bytes === undefined ? "" : ` (${event.bytes} bytes)`}`;
    case "approval":
      return `${event.summary}${event.by === undefined ? "" : ` by ${event.by}`}`;
    case "auth_failure":
      return event.route;
    case "policy_block":
      return event.reason;
    case "anomaly":
      return event.detail;
    case "retention":
      return `deleted ${event.deleted} rows (${event.fromId} to ${event.toId}) for ${event.reason === "size" ? "size (audit.maxMb), early" : "age (audit.retentionDays)"}`;
  }
}

function tableCells(id: string, time: string, kind: string, client: string, session: string, language: string, status: string, risk: string, what: string): string {
  return [id.padStart(6), time.padEnd(24), kind.padEnd(12), client.padEnd(16), session.padEnd(12), language.padEnd(10), status.padEnd(10), risk.padStart(4), what].join("  ");
}

/** The table's column names, above its rows. */
const TABLE_HEADER = tableCells("id", "time", "kind", "client", "session", "language", "status", "risk", "what");

/** One row; every cell a client could have chosen (a path, a route, a session id) is made printable. */
function tableLine(row: AuditRecord): string {
  const cell = (text: string | null): string => (text === null ? "-" : printable(text));
  return tableCells(String(row.id), row.time, row.kind, cell(row.client), cell(row.session_id), cell(row.language), cell(row.status), row.risk === null ? "-" : String(row.risk), printable(subject(row)));
}

/** Writes a line, waiting for stdout to drain when it is full (export of a large log stays small). */
async function writeLine(io: CliIo, text: string): Promise<void> {
  if (!io.stdout.write(`${text}\n`)) await once(io.stdout, "drain");
}

function openLog(config: SandgateConfig, io: CliIo): AuditDatabase | undefined {
  const path = auditPathOf(config);
  if (!existsSync(path)) {
    io.stderr.write(`sandgate: no audit log at ${path}; \`sandgate serve\` creates it (audit.enabled, audit.path)\n`);
    return undefined;
  }
  return openAuditReader(path);
}

export async function runAudit(options: AuditOptions, config: SandgateConfig, io: CliIo): Promise<number> {
  const action = options.action ?? "query";
  if (!["query", "verify", "export"].includes(action)) throw new SandgateError("INVALID_INPUT", `sandgate audit ${action}: use sandgate audit [filters], audit verify or audit export`);
  const filter = filterOf(options);
  // verify walks the whole chain; a filter would look as if it checked only those rows.
  if (action === "verify" && (Object.keys(filter).length > 0 || options.limit !== undefined || options.cursor !== undefined)) {
    throw new SandgateError("INVALID_INPUT", "sandgate audit verify checks the whole log and takes no filters");
  }
  const limit = whole(options.limit, "limit", AUDIT_PAGE_MAX);
  const cursor = whole(options.cursor, "cursor");
  if (limit === 0) throw new SandgateError("INVALID_INPUT", `--limit 0 is not a whole number from 1 to ${AUDIT_PAGE_MAX}`);
  const db = openLog(config, io);
  if (!db) return 1;
  try {
    if (action === "verify") {
      const result = verifyAudit(db);
      if (options.json) await writeLine(io, JSON.stringify(result.ok ? result : { ok: false, rows: result.rows, bad_id: result.badId, reason: result.reason }));
      else if (result.ok) {
        await writeLine(io, `${result.rows} rows verified`);
        const r = result.retention;
        if (r !== undefined) {
          const early = r.early > 0 ? `, ${r.early} of them early, for size (audit.maxMb)` : "";
          await writeLine(io, `retention: ${r.events} retention rows record ${r.deleted} rows deleted${early}; the last, row ${r.last.id} at ${r.last.time}, deleted rows ${r.last.from_id} to ${r.last.to_id} for ${r.last.reason}`);
        }
      }
      else io.stderr.write(`sandgate: the audit log was tampered with: ${result.reason} (first bad row ${result.badId}; ${result.rows} rows before it verified)\n`);
      return result.ok ? 0 : 1;
    }
    if (action === "export") {
      for (const row of exportAudit(db, filter)) await writeLine(io, JSON.stringify(row));
      return 0;
    }
    const page = queryAudit(db, { ...filter, ...(limit !== undefined ? { limit } : {}), ...(cursor !== undefined ? { cursor } : {}) });
    if (options.json) await writeLine(io, JSON.stringify(page, null, 2));
    else if (options.jsonl) for (const row of page.rows) await writeLine(io, JSON.stringify(row));
    else {
      if (page.rows.length === 0) io.stderr.write("no audit rows match\n");
      else await writeLine(io, TABLE_HEADER);
      for (const row of page.rows) await writeLine(io, tableLine(row));
      if (page.next_cursor !== null) io.stderr.write(`more rows: add --cursor ${page.next_cursor}\n`);
    }
    return 0;
  } finally {
    db.close();
  }
}
