// An execution result on the wire, in snake_case: what execute_code, execute_command, POST /execute
// and a finished background job answer, and the conversion from the engine's result.

import { z } from "zod";
import type { ExecutionResult } from "../../execution/index.js";
import { IMAGE_MIME_TYPES } from "../../sandbox/index.js";
import { securitySummarySchema, toWireSecurity } from "../governance/index.js";

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

/** Statuses for which the host stopped the run itself; a session's interpreter stopped so loses its state. */
const STOPPED = new Set<ExecutionResult["status"]>(["timeout", "killed", "memory_limit", "output_limit"]);

/** Why a result says state_reset, as far as the result shows it (a session that expired says so instead: runInSession in operations.ts). */
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

