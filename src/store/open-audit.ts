// The audit log a config asks for: audit.path (default SANDBOX_DIR/audit/audit.db) and its limits.

import type { SandgateConfig } from "../config/index.js";
import type { Logger } from "../util/logger.js";
import { auditPathOf } from "./audit-db.js";
import { AuditLog } from "./audit-log.js";

export function openAuditLog(config: SandgateConfig, log?: Logger): AuditLog {
  const { queueMax, writeTimeoutS, retentionDays, maxMb, minRetentionDays, codeBudgetMbPerDay } = config.audit;
  return new AuditLog({
    path: auditPathOf(config),
    queueMax,
    writeTimeoutMs: writeTimeoutS * 1000,
    retentionDays,
    maxMb,
    minRetentionDays,
    codeBudgetBytes: codeBudgetMbPerDay * 1048576,
    ...(log ? { log } : {}),
  });
}
