// The shapes on the wire: tool arguments and results in snake_case, shared by the MCP tools,
// the REST routes and the OpenAPI document, so the three can never disagree.

import { z } from "zod";
import { FLAVOR_NAMES } from "../config/index.js";
import { ERROR_CODES, type ErrorCode } from "../errors/index.js";
import type { ExecutionResult } from "../execution/index.js";
import { LANGUAGE_NAMES_AND_ALIASES } from "../languages/index.js";
import { IMAGE_MIME_TYPES } from "../sandbox/index.js";
import { securitySummarySchema, toWireSecurity } from "../features/governance/index.js";

export { getSessionsInput, getSessionsOutput, sessionSchema, stopSessionInput, stopSessionOutput, toWireSession } from "../features/sessions/wire.js";

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

const errorInfo = z.object({
  type: z.string().describe("Exception class, or Timeout, MemoryLimit, OutputLimit, Killed, WorkspaceLimit"),
  message: z.string(),
  traceback: z.string(),
});

export const executionResultSchema = z.object({
  status: z.enum(["ok", "error", "timeout", "memory_limit", "output_limit", "killed", "running"]).describe("running: started as a background job (job_id)"),
  job_id: z.string().optional(),
  exit_code: z.number().int().nullable().describe("null when killed"),
  stdout: z.string().describe("Head and tail when longer than the display limit"),
  stderr: z.string(),
  value: z.unknown().optional().describe("The last expression's value: as JSON, or its text form (value_kind repr)"),
  value_kind: z.enum(["json", "repr"]).optional().describe("repr: value is the text form (repr, util.inspect, a table) of a value JSON cannot carry"),
  error: errorInfo.optional(),
  duration_ms: z.number(),
  truncated: z.boolean().describe("Output was cut; see full_output"),
  session_id: z.string().nullable(),
  full_output: z
    .object({ stdout: z.string().optional(), stderr: z.string().optional() })
    .optional()
    .describe("Resource URIs of the complete output (sandgate://outputs/{id}/{stream}; REST: GET /outputs/{id}/{stream}), kept for SANDGATE_OUTPUT_TTL seconds"),
  state_reset: z
    .boolean()
    .optional()
    .describe("The session's variables and imports were lost since your last result (killed, crashed, expired or evicted); files remain unless it expired"),
  state_reset_reason: z.string().optional().describe("Why state_reset: what ended the interpreter or the session"),
  output_note: z.string().optional().describe("What was cut to fit the token budget"),
  images: z
    .array(z.object({ mime: z.enum(IMAGE_MIME_TYPES), data_base64: z.string() }))
    .optional()
    .describe("Plots and images the code returned; over MCP they are image content items"),
  images_note: z.string().optional().describe("Images dropped or refused, and what to do instead"),
  tool_calls: z
    .array(
      z.object({
        tool: z.string(),
        ok: z.boolean(),
        duration_ms: z.number(),
        error: z.string().optional(),
        note: z.string().optional().describe("PII tokens in the arguments that this session did not issue, sent as typed"),
      }),
    )
    .describe("Upstream tools the code called"),
  tokens: z
    .object({
      returned: z.number().int().describe("Of stdout, stderr and value as returned"),
      output: z.number().int().describe("Of the full output"),
      tool_results: z.number().int().describe("Of upstream results kept in the sandbox"),
    })
    .describe("Tokens (o200k)"),
  security: securitySummarySchema.optional(),
  execution_id: z.string().optional().describe("Id in the audit trail"),
});
export type WireExecutionResult = z.infer<typeof executionResultSchema>;

const encoding = z.enum(["utf8", "base64"]);
const workspacePath = z.string().describe("Relative to /workspace");

export const fileReadInput = z.object({ path: workspacePath, session_id: z.string().min(1), encoding: encoding.optional() }).strict();
export const fileReadOutput = z.object({
  path: z.string(),
  content: z.string(),
  encoding,
  size: z.number().int(),
  note: z.string().optional().describe("For a binary file read without encoding: how it was sent (a blob resource, or a pointer to the REST download when large)"),
});
export const fileWriteInput = z
  .object({ path: workspacePath, content: z.string(), session_id: z.string().min(1), encoding: encoding.optional() })
  .strict();
export const fileWriteOutput = z.object({ path: z.string(), size: z.number().int(), created: z.boolean() });
export const fileListInput = z.object({ path: workspacePath.optional().describe("Default /workspace"), session_id: z.string().min(1) }).strict();
export const fileListOutput = z.object({
  path: z.string(),
  entries: z.array(
    z.object({
      name: z.string(),
      path: z.string(),
      type: z.enum(["file", "directory", "symlink", "other"]),
      size: z.number().int(),
      modified_at: z.string(),
    }),
  ),
  truncated: z.boolean(),
});

export const getVolumePathInput = z.object({}).strict();
export const getVolumePathOutput = z.object({
  volumes: z.array(
    z.object({
      name: z.string(),
      path: z.string().describe("Where sandboxed code finds it"),
      read_only: z.boolean(),
      description: z.string().optional(),
    }),
  ),
  workspace: z.string().describe("The writable working directory of every sandbox"),
});

const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export const errorBodySchema = z.object({
  error: z.object({
    code: z.enum(ERROR_CODE_NAMES).describe("Stable machine-readable code, e.g. UNKNOWN_LANGUAGE (the table under Errors in the README)"),
    message: z.string().describe("What went wrong and what to do"),
    data: z.record(z.unknown()).optional().describe("Details; retry_after (seconds) on a 429, as the Retry-After header"),
  }),
});

/** Statuses for which the host stopped the run itself; a session's interpreter stopped so loses its state. */
const STOPPED = new Set<ExecutionResult["status"]>(["timeout", "killed", "memory_limit", "output_limit"]);

/** Why a result says state_reset, as far as the result shows it (a session that expired says so instead: runExecution). */
function stateResetReason(result: ExecutionResult): string {
  if (STOPPED.has(result.status)) return `the interpreter was killed in this call (${result.status}), so the session's variables and imports are gone; its files remain`;
  return "the interpreter of this language ended before or during this call (the code exited it, it crashed, or its idle sandbox was stopped to make room for other calls); variables and imports are gone, files remain";
}

export function toWireResult(result: ExecutionResult): WireExecutionResult {
  return {
    status: result.status,
    exit_code: result.exitCode,
    stdout: result.stdout,
    stderr: result.stderr,
    ...(result.value !== undefined ? { value: result.value, value_kind: result.valueKind ?? "json" } : {}),
    ...(result.error ? { error: result.error } : {}),
    duration_ms: result.durationMs,
    truncated: result.truncated,
    session_id: result.sessionId,
    ...(result.fullOutput ? { full_output: result.fullOutput } : {}),
    ...(result.stateReset ? { state_reset: true, state_reset_reason: stateResetReason(result) } : {}),
    ...(result.outputNote ? { output_note: result.outputNote } : {}),
    ...(result.images ? { images: result.images.map((image) => ({ mime: image.mime, data_base64: image.dataBase64 })) } : {}),
    ...(result.imagesNote ? { images_note: result.imagesNote } : {}),
    tool_calls: result.toolCalls.map((c) => ({ tool: c.tool, ok: c.ok, duration_ms: c.durationMs, ...(c.error ? { error: c.error } : {}), ...(c.note ? { note: c.note } : {}) })),
    tokens: { returned: result.tokens.returned, output: result.tokens.output, tool_results: result.tokens.toolResults },
    ...(result.security ? { security: toWireSecurity(result.security) } : {}),
    ...(result.executionId ? { execution_id: result.executionId } : {}),
  };
}

