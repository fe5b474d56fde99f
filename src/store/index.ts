// Public surface of store: the SQLite audit log (writer, queries, verification, retention) that
// the server records governance events in and `sandgate audit` reads, and those events' shapes.
export { AuditLog } from "./audit-log.js";
export type { AuditLogOptions, AuditStore, FlushObserver } from "./audit-log.js";
export { openAuditLog } from "./open-audit.js";
export { auditPathOf, openAuditReader } from "./audit-db.js";
export type { AuditDatabase } from "./audit-db.js";
export { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX, exportAudit, queryAudit } from "./audit-query.js";
export type { AuditFilter, AuditPage, AuditPageRequest, AuditRecord } from "./audit-query.js";
export { applyRetention } from "./audit-retention.js";
export type { RetentionEvent, RetentionOptions, RetentionReport } from "./audit-retention.js";
export { INLINE_CODE_CHARS } from "./audit-code.js";
export { AUDIT_KINDS, checkAuditFilter } from "./audit-filter.js";
export { verifyAudit } from "./audit-verify.js";
export type {
  AnomalyEvent,
  ApprovalEvent,
  AuthFailureEvent,
  EventSink,
  ExecutionEvent,
  FileEvent,
  FindingRef,
  GovernanceEvent,
  GovernanceEventKind,
  NewGovernanceEvent,
  PolicyBlockEvent,
  ToolCallEvent,
} from "./audit-events.js";
export type { RetentionSummary, VerifyResult } from "./audit-verify.js";
export { parseTimeBound } from "./relative-time.js";
