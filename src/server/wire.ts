// The shapes on the wire: tool arguments and results in snake_case, shared by the MCP tools,
// the REST routes and the OpenAPI document, so the three can never disagree.

import { z } from "zod";
import { ERROR_CODES, type ErrorCode } from "../errors/index.js";

export { getSessionsInput, getSessionsOutput, sessionSchema, stopSessionInput, stopSessionOutput, toWireSession } from "../features/sessions/wire.js";
export { fileListInput, fileListOutput, fileReadInput, fileReadOutput, fileWriteInput, fileWriteOutput, getVolumePathInput, getVolumePathOutput } from "../features/files/wire.js";
export { executionResultSchema, toWireResult, type WireExecutionResult } from "../features/execute/result-wire.js";
export { executeCodeInput, executeCommandInput } from "../features/execute/wire.js";

const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export const errorBodySchema = z.object({
  error: z.object({
    code: z.enum(ERROR_CODE_NAMES).describe("Stable machine-readable code, e.g. UNKNOWN_LANGUAGE (the table under Errors in the README)"),
    message: z.string().describe("What went wrong and what to do"),
    data: z.record(z.unknown()).optional().describe("Details; retry_after (seconds) on a 429, as the Retry-After header"),
  }),
});
