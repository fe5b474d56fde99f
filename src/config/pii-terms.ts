// The words of PII tokenization that the settings (pii.*) speak: the built-in kinds of personal data
// and the ones on by default. The PII feature detects them; the core names them.

/** Built-in kinds; `name` is opt-in (a detector of names is less sure than the validators of the others). */
export const PII_TYPES = ["email", "phone", "credit_card", "ssn", "iban", "ip_address", "name"] as const;
export type PiiType = (typeof PII_TYPES)[number];

/** The kinds on by default: every built-in one but names. */
export const DEFAULT_PII_TYPES: readonly PiiType[] = ["email", "phone", "credit_card", "ssn", "iban", "ip_address"];
