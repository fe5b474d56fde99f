// The shapes on the wire: tool arguments and results in snake_case, shared by the MCP tools,
// the REST routes and the OpenAPI document, so the three can never disagree.

import { z } from "zod";
import { FLAVOR_NAMES } from "../config/index.js";
import { ERROR_CODES, type ErrorCode } from "../errors/index.js";
import type { ExecutionResult, SessionInfo } from "../execution/index.js";
import { describeLanguages, LANGUAGE_NAMES_AND_ALIASES, languageTitles } from "../languages/index.js";
import { IMAGE_MIME_TYPES } from "../sandbox/index.js";
import { securitySummarySchema, toWireSecurity } from "./security-wire.js";

const sessionId = z
  .string()
  .min(1)
  .max(128)
  .describe("Session to run in: variables, imports and files in /workspace persist across calls. Created on first use; omit for a fresh, throwaway sandbox");
/**
 * A language by name or alias, in any case: an enum, so that tool listings show every accepted
 * name. Lower-cased before the check; an unknown one is UNKNOWN_LANGUAGE (see parseToolArguments).
 */
const languageName = z
  .preprocess((value) => (typeof value === "string" ? value.toLowerCase() : value), z.enum(LANGUAGE_NAMES_AND_ALIASES))
  .describe(`One of ${describeLanguages()}, in any case`);

const timeout = z
  .number()
  .positive()
  .describe("Wall-clock limit in seconds, up to the admin maximum; by default the per-call default, or the maximum for background jobs");
const background = z
  .boolean()
  .optional()
  .describe("Run as a background job: returns a job_id at once; read output and the result with get_job, stop it with stop_job");

const keepProcesses = z
  .boolean()
  .optional()
  .describe(
    "Keep processes this call leaves running (e.g. a server started with &) alive for the session's later calls, until it ends; needs session_id. They run only while a call of the session runs: redirect their output to a file",
  );

/** Names and bounds are checked by the engine (checkEnv), which names a refused variable. */
const envVars = z.record(z.string());
const callEnv = envVars.describe(
  "Environment variables for this call only, e.g. {\"API_KEY\": \"...\"} (PATH, HOME, LD_*, PYTHONPATH, NODE_OPTIONS, SANDGATE_* and a few more are refused); " +
    "values of secret-looking names (KEY, TOKEN, SECRET...) are shown as [masked:NAME] in results",
);
const sessionEnvArg = envVars.describe("The session's environment variables (replacing those set before) for this and its later calls, `env` on top; needs session_id");

export const executeCodeInput = z
  .object({
    code: z.string().describe(`The program to run. In ${languageTitles("and", (spec) => spec.returnsValue)} the value of the last expression is returned as \`value\``),
    language: languageName,
    session_id: sessionId.optional(),
    timeout: timeout.optional(),
    flavor: z.enum(FLAVOR_NAMES).optional().describe("Resource preset (CPU, memory, processes): small, medium or large"),
    env: callEnv.optional(),
    session_env: sessionEnvArg.optional(),
    keep_processes: keepProcesses,
    background,
  })
  .strict();

export const executeCommandInput = z
  .object({
    command: z.string().min(1).describe("A whole shell line run by bash: pipes, redirections, && and ; work"),
    session_id: sessionId.optional(),
    timeout: timeout.optional(),
    working_directory: z
      .string()
      .optional()
      .describe("Directory to run in, relative to /workspace or absolute inside the sandbox; default: /workspace (or the session's current directory)"),
    // The same as execute_code's, described once there: an agent reads both tools.
    env: envVars.describe("Environment variables for this call only, as in execute_code (secret-looking values masked)").optional(),
    session_env: envVars.describe("The session's environment variables, as in execute_code; needs session_id").optional(),
    keep_processes: z.boolean().optional().describe("Keep processes this line leaves running (`server &`) for the session's later calls, as in execute_code"),
    background: z.boolean().optional().describe("Run as a background job (get_job, stop_job), as in execute_code"),
  })
  .strict();

const errorInfo = z.object({
  type: z.string().describe("Exception class, or Timeout, MemoryLimit, OutputLimit, Killed, WorkspaceLimit"),
  message: z.string(),
  traceback: z.string(),
});

export const executionResultSchema = z.object({
  status: z.enum(["ok", "error", "timeout", "memory_limit", "output_limit", "killed", "running"]).describe("How the run ended; running: it was started as a background job (job_id)"),
  job_id: z.string().optional().describe("The background job running this call (background: true): poll it with get_job"),
  exit_code: z.number().int().nullable().describe("Exit status of the program; null when it was killed"),
  stdout: z.string().describe("Standard output, head and tail kept when longer than the display limit"),
  stderr: z.string(),
  value: z.unknown().optional().describe(`Value of the last expression (${languageTitles("and", (spec) => spec.returnsValue)}), when JSON-serializable`),
  error: errorInfo.optional().describe("What went wrong, when status is not ok"),
  duration_ms: z.number(),
  truncated: z.boolean().describe("Output was cut; full_output names where the whole text can be read"),
  session_id: z.string().nullable(),
  full_output: z
    .object({ stdout: z.string().optional(), stderr: z.string().optional() })
    .optional()
    .describe("MCP resource URIs of the complete output (sandgate://outputs/{id}/{stream}; over REST GET /outputs/{id}/{stream}), readable by this caller for SANDGATE_OUTPUT_TTL seconds"),
  state_reset: z
    .boolean()
    .optional()
    .describe(
      "The session's interpreter state (variables, imports, shell state) was lost since your last result: killed (a timeout or cancel it did not stop for, a crash, out of memory), expired, or stopped to make room; files remain unless it expired. A timeout or cancel that only interrupted the code keeps the state",
    ),
  output_note: z.string().optional().describe("What was cut from stdout to fit the token budget, and where the full output is"),
  images: z
    .array(z.object({ mime: z.enum(IMAGE_MIME_TYPES), data_base64: z.string() }))
    .optional()
    .describe("Images the code returned (plots, PIL images, image values, sandgate.show()); over MCP they are image content items"),
  images_note: z.string().optional().describe("Images that were dropped (over the size or count limit) or refused, and what to do instead"),
  tool_calls: z
    .array(
      z.object({
        tool: z.string().describe("Tool id, server.tool"),
        ok: z.boolean(),
        duration_ms: z.number(),
        error: z.string().optional(),
      }),
    )
    .describe("Upstream tools the code called, in order"),
  tokens: z
    .object({
      returned: z.number().int().describe("Tokens (o200k) of stdout, stderr and value as returned here"),
      output: z.number().int().describe("Tokens of the full output before shortening"),
      tool_results: z.number().int().describe("Tokens of upstream tool results that stayed in the sandbox"),
    })
    .describe("Token accounting: what reached you against what stayed in the sandbox"),
  security: securitySummarySchema.optional(),
  execution_id: z.string().optional().describe("The execution's id in the audit trail (when governance is on)"),
});
export type WireExecutionResult = z.infer<typeof executionResultSchema>;

export const sessionSchema = z.object({
  session_id: z.string(),
  created_at: z.string(),
  last_used_at: z.string(),
  expires_at: z.string().describe("When the session ends unless used again"),
  calls: z.number().int(),
  languages: z.array(z.string()).describe("Runners started in this session"),
  busy: z.boolean(),
  env_names: z.array(z.string()).describe("Names of the session's environment variables (their values are never shown)"),
});

export const getSessionsInput = z.object({ session_id: sessionId.optional().describe("Describe only this session") }).strict();
export const getSessionsOutput = z.object({ sessions: z.array(sessionSchema) });
export const stopSessionInput = z.object({ session_id: z.string().min(1).describe("The session to stop; its workspace is deleted") }).strict();
export const stopSessionOutput = z.object({ session_id: z.string(), stopped: z.boolean() });

const encoding = z.enum(["utf8", "base64"]).describe("utf8 for text (default), base64 for binary files");
const workspacePath = z.string().describe("Path relative to /workspace, or absolute under /workspace");

export const fileReadInput = z.object({ path: workspacePath, session_id: z.string().min(1), encoding: encoding.optional() }).strict();
export const fileReadOutput = z.object({
  path: z.string(),
  content: z.string(),
  encoding,
  size: z.number().int(),
  note: z.string().optional().describe("For a binary file read without encoding: how it was sent (a blob resource, or a pointer to the REST download when large)"),
});
export const fileWriteInput = z
  .object({ path: workspacePath, content: z.string().describe("File content, encoded as `encoding` says"), session_id: z.string().min(1), encoding: encoding.optional() })
  .strict();
export const fileWriteOutput = z.object({ path: z.string(), size: z.number().int(), created: z.boolean() });
export const fileListInput = z.object({ path: workspacePath.optional().describe("Directory to list; default /workspace"), session_id: z.string().min(1) }).strict();
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

export function toWireResult(result: ExecutionResult): WireExecutionResult {
  return {
    status: result.status,
    exit_code: result.exitCode,
    stdout: result.stdout,
    stderr: result.stderr,
    ...(result.value !== undefined ? { value: result.value } : {}),
    ...(result.error ? { error: result.error } : {}),
    duration_ms: result.durationMs,
    truncated: result.truncated,
    session_id: result.sessionId,
    ...(result.fullOutput ? { full_output: result.fullOutput } : {}),
    ...(result.stateReset ? { state_reset: true } : {}),
    ...(result.outputNote ? { output_note: result.outputNote } : {}),
    ...(result.images ? { images: result.images.map((image) => ({ mime: image.mime, data_base64: image.dataBase64 })) } : {}),
    ...(result.imagesNote ? { images_note: result.imagesNote } : {}),
    tool_calls: result.toolCalls.map((c) => ({ tool: c.tool, ok: c.ok, duration_ms: c.durationMs, ...(c.error ? { error: c.error } : {}) })),
    tokens: { returned: result.tokens.returned, output: result.tokens.output, tool_results: result.tokens.toolResults },
    ...(result.security ? { security: toWireSecurity(result.security) } : {}),
    ...(result.executionId ? { execution_id: result.executionId } : {}),
  };
}

export function toWireSession(info: SessionInfo): z.infer<typeof sessionSchema> {
  return {
    session_id: info.id,
    created_at: info.createdAt,
    last_used_at: info.lastUsedAt,
    expires_at: info.expiresAt,
    calls: info.calls,
    languages: info.runners,
    busy: info.busy,
    env_names: info.envNames,
  };
}
