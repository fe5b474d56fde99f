// The PII feature's operations: tokenizing a text as the PII policy would.
export { tokenizeInput, tokenizeOutput, tokenizePii } from "./tokenize.js";

import { tokenizePii } from "./tokenize.js";

/** The operations of this feature, for the registry. */
export const piiOperations = [tokenizePii] as const;
