// The execute request: its schema and the checks that turn bad input into typed errors
// (unknown language, empty or oversize code) before any sandbox is touched.

import { z } from "zod";
import { FLAVOR_NAMES, type SandgateConfig } from "../config/index.js";
import { SandgateError } from "../errors/index.js";
import { describeLanguages, LANGUAGES, resolveLanguage, type Language } from "../languages/index.js";
import type { Approver } from "./approval.js";
import type { OutputStream } from "../sandbox/index.js";
import { checkEnv } from "./env-vars.js";

export const executeRequestSchema = z
  .object({
    code: z.string().describe("Source code to run"),
    language: z.string().describe(`One of ${describeLanguages()}; names are matched case-insensitively`),
    sessionId: z.string().optional().describe("Run in this session (state and workspace persist); omit for a fresh sandbox"),
    timeoutS: z.number().positive().optional().describe("Wall-clock limit in seconds, at most MAX_EXECUTION_TIME; default SANDGATE_DEFAULT_TIMEOUT"),
    memoryMb: z.number().int().positive().optional().describe("Memory limit in MB, at most MAX_MEMORY_MB"),
    flavor: z.enum(FLAVOR_NAMES).optional().describe("Resource preset: small, medium or large"),
    env: z.record(z.string()).optional().describe("Environment variables for this call only (see checkEnv for the names refused)"),
    sessionEnv: z.record(z.string()).optional().describe("Replaces the session's environment variables from this call on; needs sessionId"),
    keepProcesses: z.boolean().optional().describe("Processes the call leaves running stay alive across the session's later calls until it ends; needs sessionId"),
  })
  .strict();

export type ExecuteInput = z.infer<typeof executeRequestSchema>;

export interface ExecuteRequest extends Omit<ExecuteInput, "language"> {
  /** A language's name or alias in any case; an unknown one is refused with UNKNOWN_LANGUAGE, not a type error at the edge. */
  language: string;
  /** Receives stdout/stderr text while the code runs. */
  onOutput?: (stream: OutputStream, text: string) => void;
  /** Aborting stops the running code; the result has status "killed". */
  signal?: AbortSignal;
  /**
   * The verified identity of the caller (an API key's name, an MCP session, a REST peer).
   * Sessions and saved outputs belong to it; library callers may leave it out ("local").
   */
  owner?: string;
  /** Asks the calling client itself when policy wants a human's approval (MCP elicitation); else the approvals queue. */
  approver?: Approver;
  /** Told, now and then, that the call waits for a human's approval (progress for the caller). */
  onWaiting?: (message: string) => void;
}

/** The UNKNOWN_LANGUAGE error for `language`, listing the names and aliases accepted. */
export function unknownLanguageError(language: string): SandgateError {
  return new SandgateError("UNKNOWN_LANGUAGE", `unknown language ${JSON.stringify(language)}; use one of ${describeLanguages()}`, {
    data: { language, supported: [...LANGUAGES] },
  });
}

/** Validates a request; returns its language (a name or alias resolved). Throws SandgateError with a precise code. */
export function checkRequest(request: ExecuteRequest, config: SandgateConfig): Language {
  const parsed = executeRequestSchema.safeParse({
    code: request.code,
    language: request.language,
    sessionId: request.sessionId,
    timeoutS: request.timeoutS,
    memoryMb: request.memoryMb,
    flavor: request.flavor,
    env: request.env,
    sessionEnv: request.sessionEnv,
    keepProcesses: request.keepProcesses,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join(".") ?? "";
    throw new SandgateError("INVALID_INPUT", `${field || "request"}: ${issue?.message ?? "invalid"}`, { data: { field } });
  }
  const { code } = parsed.data;
  if (parsed.data.keepProcesses && parsed.data.sessionId === undefined) {
    throw new SandgateError("INVALID_INPUT", "keep_processes needs a session_id: a call without one runs in a sandbox that is thrown away when it ends", {
      data: { field: "keep_processes" },
    });
  }
  // The request's own objects, as the engine passes them on (a parsed copy could differ: zod drops a `__proto__` key).
  if (request.env !== undefined) checkEnv(request.env, "env");
  if (request.sessionEnv !== undefined) checkEnv(request.sessionEnv, "session_env");
  const language = resolveLanguage(parsed.data.language);
  if (!language) throw unknownLanguageError(parsed.data.language);
  if (code.trim() === "") throw new SandgateError("CODE_EMPTY", "code is empty; send the program to run");
  const bytes = Buffer.byteLength(code, "utf8");
  if (bytes > config.limits.maxCodeBytes) {
    throw new SandgateError("CODE_TOO_LARGE", `code is ${bytes} bytes, above the maximum of ${config.limits.maxCodeBytes} bytes`, {
      data: { bytes, maximum: config.limits.maxCodeBytes },
    });
  }
  if (language === "bash" && code.includes("\u0000")) {
    throw new SandgateError("INVALID_INPUT", "bash code must not contain NUL bytes", { data: { field: "code" } });
  }
  return language;
}
