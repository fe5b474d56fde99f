// The background-job operations: get_job to poll or list, stop_job, and REST's list and read; each
// caller sees only its own jobs (a job is started by execute_code's background: true, in features/execute).

import { z } from "zod";
import type { SandgateConfig } from "../../config/index.js";
import { SandgateError } from "../../errors/index.js";
import type { Engine } from "../../execution/index.js";
import { defineOperation, type McpExtras } from "../../operations/index.js";
import { describeResult, renderResultText, type WireExecutionResult } from "../execute/index.js";
import {
  getJobInput,
  getJobToolOutput,
  JOB_WAIT_UNTIL,
  jobSnapshotSchema,
  jobSnapshotToolSchema,
  listJobsOutput,
  MAX_JOB_WAIT_S,
  stopJobInput,
  toWireJob,
  toWireJobSnapshot,
} from "./wire.js";

/** What the job operations use: the engine's jobs, and the config the advice in a result's text follows. */
export interface JobsHost {
  engine: Engine;
  config: SandgateConfig;
}

/** A job as get_job and stop_job answer it (the result, when there, is execute_code's). */
type ToolJob = z.infer<typeof jobSnapshotToolSchema>;

/** The text an agent reads for a job: its state, output since the offsets asked for, and once it ended the result. */
export function renderJobText(job: ToolJob, asked: boolean, config: SandgateConfig): string {
  const ranS = Math.round(((job.ended_at ? Date.parse(job.ended_at) : Date.now()) - Date.parse(job.started_at)) / 1000);
  const head = `Job ${job.job_id}${job.session_id ? ` (session ${job.session_id})` : ""}: ${job.status}${job.reason ? ` (${job.reason})` : ""} after ${ranS} s of ${job.timeout_s} s.`;
  const skipped = job.skipped ? `[${Object.entries(job.skipped).map(([s, n]) => `${n} characters of ${s} no longer kept`).join(", ")}]` : undefined;
  const next = `[next since: {"stdout": ${job.next.stdout}, "stderr": ${job.next.stderr}}${job.more_output ? "; more output is waiting" : ""}]`;
  if (job.result) {
    const result = job.result as WireExecutionResult;
    // After polling with offsets, only the newer output is repeated; the result carries the rest.
    const shown = asked ? { ...result, stdout: job.stdout, stderr: job.stderr } : result;
    return [head, skipped, renderResultText(shown, describeResult(result, config)), next].filter(Boolean).join("\n\n");
  }
  const parts = [head, skipped];
  if (job.stdout) parts.push(job.stdout.trimEnd());
  if (job.stderr) parts.push(`[stderr]\n${job.stderr.trimEnd()}`);
  if (job.error) parts.push(`[${job.error.code}] ${job.error.message}`);
  if (job.status === "running") parts.push(`${next} Call get_job again with these offsets (and wait_s; until: "end" to wait for the end only) for newer output.`);
  return parts.filter(Boolean).join("\n\n");
}

/** A job's result images as MCP image content, as execute_code's are; the structured result then leaves them out. */
function jobImages(job: Partial<ToolJob>): McpExtras {
  const result = job.result as WireExecutionResult | undefined;
  const images = result?.images;
  if (!result || !images?.length) return {};
  const { images: _sent, ...rest } = result;
  return { structured: { ...job, result: rest }, images: images.map((image) => ({ mimeType: image.mime, data: image.data_base64 })) };
}

const jobId = z.string().min(1);
const whole = z.string().regex(/^\d+$/, "a whole number");

export const getJob = defineOperation({
  id: "jobs.get",
  summary: "Status, new output and (once ended) the result of a background job; without job_id, your jobs",
  scope: "execute",
  effects: ["read"],
  input: getJobInput,
  output: getJobToolOutput,
  async run(host: JobsHost, input, call) {
    if (input.job_id === undefined) return { jobs: host.engine.jobs.list(call.owner).map(toWireJob) };
    const job = await host.engine.jobs.get(input.job_id, call.owner, {
      ...(input.wait_s !== undefined ? { waitMs: input.wait_s * 1000 } : {}),
      ...(input.until ? { until: input.until } : {}),
      ...(input.since ? { since: input.since } : {}),
      ...(call.signal ? { signal: call.signal } : {}),
    });
    return toWireJobSnapshot(job);
  },
  surfaces: {
    mcp: {
      tool: "get_job",
      title: "Read a background job",
      description: "Status, new output and (once ended) the result of a background job.",
      text(output, input, host) {
        if (output.jobs) return output.jobs.length === 0 ? "No background jobs. Pass background: true to execute_code or execute_command to start one." : JSON.stringify({ jobs: output.jobs }, null, 2);
        const asked = (input.since?.stdout ?? 0) > 0 || (input.since?.stderr ?? 0) > 0;
        return renderJobText(output as ToolJob, asked, host.config);
      },
      extras: (output) => jobImages(output),
    },
    rest: null,
    sandbox: null,
  },
});

export const listJobs = defineOperation({
  id: "jobs.list",
  summary: "List your background jobs, running and recently finished (each caller sees only its own)",
  scope: "execute",
  effects: ["read"],
  input: z.object({}),
  output: listJobsOutput,
  run: async (host: JobsHost, _input, call) => ({ jobs: host.engine.jobs.list(call.owner).map(toWireJob) }),
  surfaces: { mcp: null, rest: { method: "get", path: "/jobs", tag: "jobs" }, sandbox: null },
});

export const readJob = defineOperation({
  id: "jobs.read",
  summary: "A background job: status, output since the offsets given, and its result once it ended",
  scope: "execute",
  effects: ["read"],
  // REST's query form of get_job's arguments: strings, and the offsets one parameter each.
  input: z.object({
    job_id: jobId,
    wait: z.string().regex(/^\d+(\.\d+)?$/, "a number of seconds").optional().describe(`Seconds to wait for news, at most ${MAX_JOB_WAIT_S}`),
    until: z.enum(JOB_WAIT_UNTIL).optional().describe('What ends the wait: "output" (default), the first new output; "end", only the job\'s end'),
    since_stdout: whole.optional().describe("Return stdout after this offset (next.stdout of the last answer)"),
    since_stderr: whole.optional().describe("Return stderr after this offset (next.stderr of the last answer)"),
  }),
  output: jobSnapshotSchema,
  async run(host: JobsHost, input, call) {
    const wait = input.wait === undefined ? 0 : Number(input.wait);
    if (wait > MAX_JOB_WAIT_S) {
      throw new SandgateError("INVALID_INPUT", `query parameter wait: at most ${MAX_JOB_WAIT_S} seconds`, { data: { field: "wait", location: "query parameter" } });
    }
    const job = await host.engine.jobs.get(input.job_id, call.owner, {
      waitMs: wait * 1000,
      ...(input.until ? { until: input.until } : {}),
      ...(call.signal ? { signal: call.signal } : {}),
      since: {
        ...(input.since_stdout !== undefined ? { stdout: Number(input.since_stdout) } : {}),
        ...(input.since_stderr !== undefined ? { stderr: Number(input.since_stderr) } : {}),
      },
    });
    return toWireJobSnapshot(job);
  },
  surfaces: {
    mcp: null,
    rest: {
      method: "get",
      path: "/jobs/:job_id",
      tag: "jobs",
      description: `?wait=N waits up to N seconds (at most ${MAX_JOB_WAIT_S}) for new output or the end (?until=end: for the end only); ?since_stdout= and ?since_stderr= take the previous answer's next offsets. The same object as get_job's result over MCP.`,
    },
    sandbox: null,
  },
});

export const stopJob = defineOperation({
  id: "jobs.stop",
  summary: "Stop a background job; answers once it stopped, with its output and result so far",
  scope: "execute",
  effects: ["delete"],
  idempotent: true,
  input: stopJobInput,
  output: jobSnapshotSchema,
  run: async (host: JobsHost, input, call) => toWireJobSnapshot(await host.engine.jobs.stop(input.job_id, call.owner)),
  surfaces: {
    mcp: {
      tool: "stop_job",
      title: "Stop a background job",
      description: "Stop a background job; returns its output and result so far.",
      outputSchema: jobSnapshotToolSchema,
      text: (output, _input, host) => renderJobText(output, false, host.config),
      extras: (output) => jobImages(output),
    },
    rest: { method: "delete", path: "/jobs/:job_id", tag: "jobs", description: null },
    sandbox: null,
  },
});
