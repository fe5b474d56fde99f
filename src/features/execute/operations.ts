// execute.code and execute.command: run code, or one bash line, in a sandbox — in the caller's
// session when it names one (started on demand), or as a background job. MCP's execute_code and
// execute_command; REST's POST /execute is a route of its own (server-sent events, 202 for a job)
// that calls execute.code.

import { z } from "zod";
import type { ExecutionResult, ExecuteRequest, JobRequest } from "../../execution/index.js";
import { defineOperation, type McpExtras, type OperationCall } from "../../operations/index.js";
import { sessionOnDemand } from "../sessions/on-demand.js";
import { startJob } from "./background.js";
import { executeCodeDescription, type ExecuteHost } from "./description.js";
import { describeResult, renderResultText } from "./result-text.js";
import { executionResultSchema, toWireResult, type WireExecutionResult } from "./result-wire.js";
import { codeRequest, commandRequest, executeCodeInput, executeCommandInput } from "./wire.js";

/**
 * The text an agent reads for a result, kept beside it by run: a started job's names its time limit,
 * which the result has no field for.
 */
const texts = new WeakMap<object, string>();

/** The parts of a call an engine request takes from it. */
type CallFields = Pick<ExecuteRequest, "sessionId" | "signal" | "onOutput" | "owner" | "approver" | "onWaiting">;

/**
 * Runs one execution: the session started on demand, cancellation, streaming and approvals wired
 * in; a note in the result when the session had ended since the caller last used it.
 */
async function runInSession(
  host: ExecuteHost,
  sessionId: string | undefined,
  call: OperationCall,
  run: (fields: CallFields) => Promise<ExecutionResult>,
): Promise<WireExecutionResult> {
  const session = sessionOnDemand(host.engine.sessions, sessionId, call.owner);
  const result = await run({
    owner: call.owner,
    ...(session.sessionId ? { sessionId: session.sessionId } : {}),
    ...(call.signal ? { signal: call.signal } : {}),
    ...(call.onOutput ? { onOutput: call.onOutput } : {}),
    ...(call.approver ? { approver: call.approver } : {}),
    ...(call.onWaiting ? { onWaiting: call.onWaiting } : {}),
  });
  if (session.note) result.stateReset = true;
  const wire = { ...toWireResult(result), ...(session.note ? { state_reset_reason: session.note } : {}) };
  texts.set(wire, renderResultText(wire, describeResult(wire, host.config), session.note));
  return wire;
}

/** Starts a call as a background job (background: true), in the caller's session when it names one. */
async function runInBackground(host: ExecuteHost, sessionId: string | undefined, owner: string, request: JobRequest): Promise<WireExecutionResult> {
  const session = sessionOnDemand(host.engine.sessions, sessionId, owner);
  const { structured, text } = await startJob(host, { ...request, ...(session.sessionId ? { sessionId: session.sessionId } : {}) }, owner, session.note);
  texts.set(structured, text);
  return structured;
}

/** What a result adds on MCP: its images as image content, and isError when the code failed (a started job has not). */
function resultExtras(result: WireExecutionResult): McpExtras {
  const images = result.images?.map((image) => ({ mimeType: image.mime, data: image.data_base64 }));
  return { isError: result.status !== "ok" && result.status !== "running", ...(images ? { images } : {}) };
}

const resultText = (result: WireExecutionResult, _input: unknown, host: ExecuteHost): string => texts.get(result) ?? renderResultText(result, describeResult(result, host.config));

export const executeCode = defineOperation({
  id: "execute.code",
  summary: "Run code in a sandbox",
  scope: "execute",
  effects: ["runs-code"],
  input: executeCodeInput,
  // microsandbox's name for the language ("python", "node"), for clients written against it.
  inputAliases: { template: "language" },
  output: executionResultSchema,
  run: (host: ExecuteHost, input, call) =>
    input.background
      ? runInBackground(host, input.session_id, call.owner, codeRequest(input))
      : runInSession(host, input.session_id, call, (fields) => host.engine.execute({ ...codeRequest(input), ...fields })),
  surfaces: {
    mcp: {
      tool: "execute_code",
      title: "Run code in a sandbox",
      description: (host) => executeCodeDescription(host, true),
      // The codemode profile lists no get_job, so no background jobs there.
      codemode: { description: (host) => executeCodeDescription(host, false), omit: ["background"] },
      text: resultText,
      extras: resultExtras,
    },
    rest: null,
    sandbox: null,
  },
});

/**
 * execute_command's outputSchema: execute_code's result, whose full schema that tool lists already
 * (repeating it made tools/list about a third longer).
 */
const sameResultAsExecuteCode = z.object({}).passthrough().describe("The result object of execute_code (see its outputSchema)");

export const executeCommand = defineOperation({
  id: "execute.command",
  summary: "Run a shell command in a sandbox",
  scope: "execute",
  effects: ["runs-code"],
  input: executeCommandInput,
  output: executionResultSchema,
  run: (host: ExecuteHost, input, call) =>
    input.background
      ? runInBackground(host, input.session_id, call.owner, commandRequest(input))
      : runInSession(host, input.session_id, call, (fields) => host.engine.executeCommand({ ...commandRequest(input), ...fields })),
  surfaces: {
    mcp: {
      tool: "execute_command",
      title: "Run a shell command in a sandbox",
      description: (host) =>
        `Run one bash line, e.g. "ls -la | head" (pipes, redirections, && work). A cd does not persist: use working_directory. ` +
        `Arguments, limits${host.config.security.enabled ? ", security policy" : ""} and result as execute_code.`,
      outputSchema: sameResultAsExecuteCode,
      text: resultText,
      extras: resultExtras,
    },
    rest: null,
    sandbox: null,
  },
});
