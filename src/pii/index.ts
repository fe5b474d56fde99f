// PII tokenization: detectors of personal data, and per-session vaults of stable tokens.

export { DEFAULT_PII_TYPES, PII_TYPES } from "./types.js";
export type { CompiledPattern, CustomPattern, DetectOptions, PiiEntity, PiiMatch, PiiType } from "./types.js";
export { compilePatterns, detectPii } from "./detect.js";
export { scanOptions, type ScanConfig } from "./scan-options.js";
export { PiiVault, tokenLabel, type Tokenized } from "./vault.js";
export { BoundaryVault, MAX_VAULT_VALUES, VaultBudget, type PiiCounts } from "./boundary-vault.js";
export { ScanTurns } from "./scan-turns.js";
