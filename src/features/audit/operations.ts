// The audit trail's operations: audit.query (filtered, paged rows, newest first; REST GET /audit)
// and audit.verify (the hash chain walked from its anchor; GET /audit/verify). Both need the "audit" scope.

import { z } from "zod";
import { SandgateError } from "../../errors/index.js";
import { defineOperation } from "../../operations/index.js";
import { AUDIT_KINDS, AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX, checkAuditFilter, parseTimeBound, type AuditPageRequest, type AuditStore } from "../../store/index.js";

const whole = z.string().regex(/^\d+$/, "a whole number");

const auditQuery = z.object({
  since: z.string().optional().describe("Rows at or after this time: ISO 8601, or a span back from now like 30m, 1h, 7d"),
  until: z.string().optional().describe("Rows before this time: ISO 8601 or a span back from now"),
  session: z.string().optional().describe("Only this session id"),
  client: z.string().optional().describe('Only this caller ("key:<name>", "local" without keys or for library use, "stdio" for sandgate stdio, "peer:<address>" for refused requests)'),
  status: z.string().optional().describe("Only this status (an execution's status, a tool call's or file operation's outcome, an approval's decision, ...)"),
  language: z.string().optional().describe("Only executions and blocks of this language (any of its names: py, js, ts, sh...)"),
  tool: z.string().optional().describe('Only calls of this tool ("server.tool")'),
  kind: z.enum(AUDIT_KINDS).optional().describe("Only events of this kind"),
  min_risk: whole.optional().describe("Only rows with a risk score at or above this (0-100)"),
  limit: whole.optional().describe(`Rows per page, default ${AUDIT_PAGE_DEFAULT}, at most ${AUDIT_PAGE_MAX}`),
  cursor: whole.optional().describe("next_cursor of the previous page"),
  order: z.enum(["desc", "asc"]).optional().describe("desc (newest first, the default) or asc"),
});

const auditRecord = z.object({
  id: z.number().int(),
  time: z.string().describe("ISO 8601"),
  kind: z.string(),
  client: z.string(),
  session_id: z.string().nullable(),
  execution_id: z.string().nullable(),
  language: z.string().nullable(),
  status: z.string().nullable(),
  risk: z.number().nullable(),
  action: z.string().nullable(),
  tool: z.string().nullable(),
  event: z.object({ kind: z.string(), time: z.number() }).passthrough().describe("The whole event as recorded (an execution's code included)"),
  prev_hash: z.string(),
  hash: z.string().describe("sha256(prev_hash || canonical JSON of the id and columns || \"\\n\" || the event JSON)"),
});

const auditPage = z.object({
  rows: z.array(auditRecord),
  next_cursor: z.number().int().nullable().describe("Pass as cursor for the next page; null on the last one"),
});

const verifyResult = z.object({
  ok: z.boolean(),
  rows: z.number().int().describe("Rows verified before the first bad one"),
  bad_id: z.number().int().optional().describe("The first row edited, deleted or moved"),
  reason: z.string().optional(),
  retention: z
    .object({
      events: z.number().int(),
      deleted: z.number().int(),
      early: z.number().int().describe("Rows deleted for size (audit.maxMb) before audit.retentionDays"),
      last: z.object({ id: z.number().int(), time: z.string(), reason: z.enum(["age", "size"]), deleted: z.number().int(), from_id: z.number().int(), to_id: z.number().int() }),
    })
    .optional()
    .describe("The retention rows kept in the chain: each deletion of old rows appends one, naming the rows it deleted"),
});

/** What the audit operations read: the server's audit log, when it keeps one. */
export interface AuditHost {
  audit?: AuditStore | undefined;
}

function auditOf(host: AuditHost): AuditStore {
  if (!host.audit) throw new SandgateError("AUDIT_UNAVAILABLE", "this server keeps no audit log (audit.enabled or security.enabled is false)");
  return host.audit;
}
function pageRequest(query: z.infer<typeof auditQuery>): AuditPageRequest {
  const limit = query.limit === undefined ? undefined : Number(query.limit);
  if (limit !== undefined && (limit < 1 || limit > AUDIT_PAGE_MAX)) {
    throw new SandgateError("INVALID_INPUT", `query parameter limit: from 1 to ${AUDIT_PAGE_MAX}`, { data: { field: "limit", location: "query parameter" } });
  }
  const filter = checkAuditFilter(query.language !== undefined ? { language: query.language } : {}, (name) => `query parameter ${name}`);
  return {
    ...(query.since !== undefined ? { since: parseTimeBound(query.since, "since") } : {}),
    ...(query.until !== undefined ? { until: parseTimeBound(query.until, "until") } : {}),
    ...(query.session !== undefined ? { sessionId: query.session } : {}),
    ...(query.client !== undefined ? { client: query.client } : {}),
    ...(query.status !== undefined ? { status: query.status } : {}),
    ...(filter.language !== undefined ? { language: filter.language } : {}),
    ...(query.tool !== undefined ? { tool: query.tool } : {}),
    ...(query.kind !== undefined ? { kind: query.kind } : {}),
    ...(query.min_risk !== undefined ? { minRisk: Number(query.min_risk) } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(query.cursor !== undefined ? { cursor: Number(query.cursor) } : {}),
    ...(query.order !== undefined ? { order: query.order } : {}),
  };
}

export const queryAudit = defineOperation({
  id: "audit.query",
  summary: "Audit rows: executions (with their code), tool calls, file operations, approvals, refusals and anomalies, newest first",
  scope: "audit",
  effects: ["read"],
  input: auditQuery,
  output: auditPage,
  // An event is an interface without an index signature; the wire type says only that it is an object.
  run: async (host: AuditHost, input) => (await auditOf(host).query(pageRequest(input))) as unknown as z.input<typeof auditPage>,
  surfaces: { mcp: null, rest: { method: "get", path: "/audit", tag: "audit", description: "Filters combine with AND; page with ?cursor= set to the previous answer's next_cursor." }, sandbox: null },
});

export const verifyAudit = defineOperation({
  id: "audit.verify",
  summary: "Walk the audit log's hash chain: ok, or the first row that was edited, deleted or moved",
  scope: "audit",
  effects: ["read"],
  input: z.object({}),
  output: verifyResult,
  async run(host: AuditHost) {
    const result = await auditOf(host).verify();
    return result.ok ? result : { ok: false, rows: result.rows, bad_id: result.badId, reason: result.reason };
  },
  surfaces: {
    mcp: null,
    rest: {
      method: "get",
      path: "/audit/verify",
      tag: "audit",
      description: "Reads every row kept; on a large log this takes a while (sandgate audit verify does the same from the command line).",
    },
    sandbox: null,
  },
});
