// Background jobs on the wire: the get_job and stop_job arguments and the job objects that MCP,
// REST and OpenAPI share, in snake_case like every other wire shape.

import { z } from "zod";
import type { JobInfo, JobSnapshot } from "../../execution/index.js";
import { executionResultSchema, toWireResult } from "../execute/result-wire.js";

/** Longest a get_job call waits for news, seconds. */
export const MAX_JOB_WAIT_S = 30;

const jobId = z.string().min(1).max(64);
const offset = z.number().int().min(0);

export const jobSchema = z.object({
  job_id: z.string(),
  status: z.enum(["running", "done", "stopped", "failed"]).describe("running (or waiting for its session or for room), done (see result), stopped (reason), failed (error)"),
  session_id: z.string().nullable(),
  kind: z.string().describe("The language, or command for a shell line"),
  timeout_s: z.number(),
  started_at: z.string(),
  ended_at: z.string().optional(),
  reason: z.string().optional().describe("Why it stopped"),
});

export const jobSnapshotSchema = jobSchema.extend({
  stdout: z.string().describe("Output since the `since` offsets (all of it without them), at most the display limit"),
  stderr: z.string(),
  next: z.object({ stdout: offset, stderr: offset }).describe("Offsets to pass as `since` to get only newer output"),
  skipped: z.object({ stdout: offset.optional(), stderr: offset.optional() }).optional().describe("Characters no longer kept while running (the result saves the full output)"),
  more_output: z.boolean().describe("More output is there past `next`: ask again from there"),
  result: executionResultSchema.optional().describe("The execution result, once the run ended"),
  error: z.object({ code: z.string(), message: z.string() }).optional().describe("Why the job could not run (status failed)"),
});

/** What ends a wait: the first new output (the default) or only the job's end. */
export const JOB_WAIT_UNTIL = ["output", "end"] as const;
const until = z.enum(JOB_WAIT_UNTIL);

export const getJobInput = z
  .object({
    job_id: jobId.optional().describe("Omit to list your jobs"),
    wait_s: z.number().min(0).max(MAX_JOB_WAIT_S).optional().describe("Seconds to wait for news"),
    until: until.optional().describe('"end": wait for the end only, not new output'),
    since: z.object({ stdout: offset.optional(), stderr: offset.optional() }).strict().optional().describe("The last answer's `next`: only newer output"),
  })
  .strict();
/**
 * The get_job and stop_job tools' outputSchema: the result is execute_code's, whose full schema
 * is in that tool's outputSchema already (repeating it made tools/list a fifth longer). REST's
 * OpenAPI keeps the full jobSnapshotSchema.
 */
export const jobSnapshotToolSchema = jobSnapshotSchema.extend({
  result: z.record(z.unknown()).optional().describe("The execution result once the run ended: the object execute_code returns (see its outputSchema)"),
});
/**
 * get_job's result has REST's shapes: with job_id the job itself (GET /jobs/{job_id}), without it
 * `{ jobs }` (GET /jobs), so one client reads both surfaces alike. An object schema (MCP needs one)
 * whose job fields are present exactly when a job was asked for.
 */
export const getJobToolOutput = jobSnapshotToolSchema
  .partial()
  .extend({ jobs: z.array(jobSchema).optional().describe("Without job_id: your jobs") });
export const stopJobInput = z.object({ job_id: jobId }).strict();
export const listJobsOutput = z.object({ jobs: z.array(jobSchema) });

export function toWireJob(info: JobInfo): z.infer<typeof jobSchema> {
  return {
    job_id: info.id,
    status: info.status,
    session_id: info.sessionId,
    kind: info.kind,
    timeout_s: info.timeoutS,
    started_at: info.startedAt,
    ...(info.endedAt !== undefined ? { ended_at: info.endedAt } : {}),
    ...(info.reason !== undefined ? { reason: info.reason } : {}),
  };
}

export function toWireJobSnapshot(job: JobSnapshot): z.infer<typeof jobSnapshotSchema> {
  return {
    ...toWireJob(job),
    stdout: job.stdout,
    stderr: job.stderr,
    next: job.next,
    ...(job.skipped ? { skipped: job.skipped } : {}),
    more_output: job.moreOutput,
    ...(job.result ? { result: toWireResult(job.result) } : {}),
    ...(job.error ? { error: job.error } : {}),
  };
}
