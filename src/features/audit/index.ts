// The audit feature: reading and verifying the audit trail the governance events are recorded in.
export { queryAudit, verifyAudit, type AuditHost } from "./operations.js";

import { queryAudit, verifyAudit } from "./operations.js";

/** The operations of this feature, for the registry. */
export const auditOperations = [queryAudit, verifyAudit] as const;
