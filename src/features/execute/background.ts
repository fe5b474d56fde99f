// A call started as a background job (execute_code or execute_command with background: true): the
// result an agent gets at once, with status running and the job id to follow.

import type { Engine, JobRequest } from "../../execution/index.js";
import { MAX_JOB_WAIT_S } from "../jobs/wire.js";
import type { WireExecutionResult } from "./result-wire.js";

/** Starts `request` as `owner`'s background job; the reply is an execution result with status running and the job id, and the text an agent reads. */
export async function startJob(host: { engine: Engine }, request: JobRequest, owner: string, note?: string): Promise<{ structured: WireExecutionResult; text: string }> {
  // Behind the execution gate: code the policy blocks is refused before a job id exists.
  const job = await host.engine.jobs.submit({ ...request, owner });
  const structured: WireExecutionResult = {
    status: "running",
    job_id: job.id,
    exit_code: null,
    stdout: "",
    stderr: "",
    duration_ms: 0,
    truncated: false,
    session_id: job.sessionId,
    ...(note ? { state_reset: true } : {}),
    tool_calls: [],
    tokens: { returned: 0, output: 0, tool_results: 0 },
  };
  const text =
    `${note ? `Note: ${note}.\n` : ""}Started background job ${job.id}${job.sessionId ? ` in session ${job.sessionId}` : ""} (time limit ${job.timeoutS} s). ` +
    `Read its output and result with get_job (wait_s up to ${MAX_JOB_WAIT_S} waits for news, with until: "end" for the end only; since: the last answer's next gives only newer output); stop it with stop_job.`;
  return { structured, text };
}

