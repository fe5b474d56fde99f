// Why an approval request was not granted, in words: who denied it and their reason, or what
// happened instead (nobody answered in time, the call was cancelled, nobody could be asked).

import type { ApprovalDecision } from "./types.js";

/** Deciders that are not a person: their reason says what happened, "denied by none" would not. */
const NOT_A_PERSON: Record<string, string> = {
  timeout: "nobody answered in time",
  cancelled: "the call was cancelled",
  "queue-full": "too many requests were waiting for approval",
  none: "nobody could be asked",
};

export function deniedBecause(decision: Pick<ApprovalDecision, "by" | "reason">): string {
  const fallback = NOT_A_PERSON[decision.by];
  if (fallback !== undefined) return decision.reason ?? fallback;
  return `denied by ${decision.by}${decision.reason ? `: ${decision.reason}` : ""}`;
}
