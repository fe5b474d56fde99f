// The error body every surface answers a refused request with (REST's JSON, OpenAPI's schema), and
// the wire shapes of the features that the library surface (src/server/index.ts) re-exports.

import { z } from "zod";
import { ERROR_CODES, type ErrorCode } from "../errors/index.js";

export { toWireSession } from "../features/sessions/index.js";
export { executionResultSchema, toWireResult, type WireExecutionResult } from "../features/execute/index.js";

const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export const errorBodySchema = z.object({
  error: z.object({
    code: z.enum(ERROR_CODE_NAMES).describe("Stable machine-readable code, e.g. UNKNOWN_LANGUAGE (the table under Errors in the README)"),
    message: z.string().describe("What went wrong and what to do"),
    data: z.record(z.unknown()).optional().describe("Details; retry_after (seconds) on a 429, as the Retry-After header"),
  }),
});
