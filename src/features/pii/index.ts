// The PII feature: detectors of personal data and per-session vaults of stable tokens, the vault
// the code mode boundary keeps (the domain); its operation, tokenizing a text as the PII policy would.

// The domain.
export { DEFAULT_PII_TYPES, PII_TYPES } from "./types.js";
export type { CompiledPattern, CustomPattern, DetectOptions, PiiEntity, PiiMatch, PiiType } from "./types.js";
export { compilePatterns, detectPii } from "./detect.js";
export { scanOptions, type ScanConfig } from "./scan-options.js";
export { PiiVault, tokenLabel, type Tokenized } from "./vault.js";
export { BoundaryVault, MAX_VAULT_VALUES, VaultBudget, type PiiCounts } from "./boundary-vault.js";
export { ScanTurns } from "./scan-turns.js";

// The operation.
export { tokenizeInput, tokenizeOutput, tokenizePii } from "./tokenize.js";

import { tokenizePii } from "./tokenize.js";

/** The operations of this feature, for the registry. */
export const piiOperations = [tokenizePii] as const;
