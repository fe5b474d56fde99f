// The shapes on the wire: tool arguments and results in snake_case, shared by the MCP tools,
// the REST routes and the OpenAPI document, so the three can never disagree.

import { z } from "zod";
import { FLAVOR_NAMES } from "../config/index.js";
import { ERROR_CODES, type ErrorCode } from "../errors/index.js";
import { LANGUAGE_NAMES_AND_ALIASES } from "../languages/index.js";

export { getSessionsInput, getSessionsOutput, sessionSchema, stopSessionInput, stopSessionOutput, toWireSession } from "../features/sessions/wire.js";
export { fileListInput, fileListOutput, fileReadInput, fileReadOutput, fileWriteInput, fileWriteOutput, getVolumePathInput, getVolumePathOutput } from "../features/files/wire.js";
export { executionResultSchema, toWireResult, type WireExecutionResult } from "../features/execute/result-wire.js";

const sessionId = z
  .string()
  .min(1)
  .max(128)
  .describe("Reuse to keep variables, imports and /workspace files across calls (created on first use); omit for a throwaway sandbox");
/**
 * A language by name or alias, in any case: an enum, so that tool listings show every accepted
 * name. Lower-cased before the check; an unknown one is UNKNOWN_LANGUAGE (see parseToolArguments).
 */
const languageName = z.preprocess((value) => (typeof value === "string" ? value.toLowerCase() : value), z.enum(LANGUAGE_NAMES_AND_ALIASES));

const timeout = z.number().positive().describe("Seconds");
const background = z
  .boolean()
  .optional()
  .describe("Run as a job: returns a job_id for get_job and stop_job");

const keepProcesses = z
  .boolean()
  .optional()
  .describe("Keep processes left running (e.g. `server &`) for the session's later calls; they run only during its calls, so log to a file. Needs session_id");

/** Names and bounds are checked by the engine (checkEnv), which names a refused variable. */
const envVars = z.record(z.string());
const callEnv = envVars.describe("Variables for this call; secret-looking values come back as [masked:NAME]");
const sessionEnvArg = envVars.describe("Variables for this and later calls of the session (replacing earlier ones); needs session_id");

export const executeCodeInput = z
  .object({
    code: z.string(),
    language: languageName,
    session_id: sessionId.optional(),
    timeout: timeout.optional(),
    flavor: z.enum(FLAVOR_NAMES).optional().describe("CPU and memory preset"),
    env: callEnv.optional(),
    session_env: sessionEnvArg.optional(),
    keep_processes: keepProcesses,
    background,
  })
  .strict();

export const executeCommandInput = z
  .object({
    command: z.string().min(1),
    session_id: sessionId.optional(),
    timeout: timeout.optional(),
    working_directory: z.string().optional().describe("Default /workspace"),
    // The same as execute_code's, described once there: an agent reads both tools.
    env: envVars.optional(),
    session_env: envVars.optional(),
    keep_processes: z.boolean().optional(),
    background: z.boolean().optional(),
  })
  .strict();


const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export const errorBodySchema = z.object({
  error: z.object({
    code: z.enum(ERROR_CODE_NAMES).describe("Stable machine-readable code, e.g. UNKNOWN_LANGUAGE (the table under Errors in the README)"),
    message: z.string().describe("What went wrong and what to do"),
    data: z.record(z.unknown()).optional().describe("Details; retry_after (seconds) on a 429, as the Retry-After header"),
  }),
});
