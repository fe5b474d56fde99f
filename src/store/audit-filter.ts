// The values an audit query may filter on, checked the same way for GET /audit and `sandgate audit`:
// a language by any of its names and a known event kind. A typo is an error that names the field,
// never a silent empty answer.

import { SandgateError } from "../errors/index.js";
import type { GovernanceEvent } from "./audit-events.js";
import { describeLanguages, resolveLanguage } from "../languages/index.js";
import type { AuditFilter } from "./audit-query.js";

/** The governance events, and `retention`: the rows the log writes itself when it deletes old ones. */
export const AUDIT_KINDS = ["execution", "tool_call", "file", "approval", "auth_failure", "policy_block", "anomaly", "retention"] as const satisfies readonly (GovernanceEvent["kind"] | "retention")[];

/** `filter` with its language resolved to the canonical name; `field` names a filter as the caller wrote it. */
export function checkAuditFilter(filter: AuditFilter, field: (name: "language" | "kind") => string): AuditFilter {
  const checked = { ...filter };
  if (filter.language !== undefined) {
    const language = resolveLanguage(filter.language);
    if (!language) {
      throw new SandgateError("UNKNOWN_LANGUAGE", `${field("language")}: unknown language ${JSON.stringify(filter.language)}; use one of ${describeLanguages()}`, {
        data: { field: "language" },
      });
    }
    checked.language = language;
  }
  if (filter.kind !== undefined && !(AUDIT_KINDS as readonly string[]).includes(filter.kind)) {
    throw new SandgateError("INVALID_INPUT", `${field("kind")}: unknown kind ${JSON.stringify(filter.kind)}; use one of ${AUDIT_KINDS.join(", ")}`, { data: { field: "kind" } });
  }
  return checked;
}
