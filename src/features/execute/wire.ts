// execute_code's and execute_command's arguments as the wire shows them (snake_case), and the engine
// requests they make.

import { z } from "zod";
import { FLAVOR_NAMES } from "../../config/index.js";
import type { CommandRequest, ExecuteRequest } from "../../execution/index.js";
import { LANGUAGE_NAMES_AND_ALIASES } from "../../languages/index.js";

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

/**
 * The engine's variables of execute_code / execute_command arguments. session_env without a session
 * is the engine's to refuse (Engine.validate, before a stream starts), as for a library caller.
 */
function envFields(args: { env?: Record<string, string>; session_env?: Record<string, string> }): Pick<ExecuteRequest, "env" | "sessionEnv"> {
  return { ...(args.env ? { env: args.env } : {}), ...(args.session_env ? { sessionEnv: args.session_env } : {}) };
}

/** The engine request for execute_code arguments (REST validates the same request before streaming). */
export function codeRequest(args: z.infer<typeof executeCodeInput>): ExecuteRequest {
  return {
    code: args.code,
    language: args.language,
    ...(args.timeout !== undefined ? { timeoutS: args.timeout } : {}),
    ...(args.flavor ? { flavor: args.flavor } : {}),
    ...envFields(args),
    ...(args.keep_processes !== undefined ? { keepProcesses: args.keep_processes } : {}),
  };
}

/** The engine request for execute_command arguments. */
export function commandRequest(args: z.infer<typeof executeCommandInput>): CommandRequest {
  return {
    command: args.command,
    ...(args.working_directory !== undefined ? { workingDirectory: args.working_directory } : {}),
    ...(args.timeout !== undefined ? { timeoutS: args.timeout } : {}),
    ...envFields(args),
    ...(args.keep_processes !== undefined ? { keepProcesses: args.keep_processes } : {}),
  };
}
