// The background-job tools: starting a call as a job (execute_code/execute_command with
// background: true), get_job to poll or list, stop_job; each caller sees only its own jobs.

import type { z } from "zod";
import { LOCAL_OWNER, type JobRequest, type JobSnapshot } from "../execution/index.js";
import type { ServerContext } from "./context.js";
import { describeResult, renderResultText } from "./result-text.js";
import { defineTool, type ToolCallContext, type ToolDefinition, type ToolReply } from "./tool-definition.js";
import { getJobInput, getJobToolOutput, jobSnapshotToolSchema, MAX_JOB_WAIT_S, stopJobInput, toWireJob, toWireJobSnapshot, type jobSnapshotSchema } from "./job-wire.js";
import type { WireExecutionResult } from "./wire.js";

const ownerOf = (call: ToolCallContext): string => call.owner ?? LOCAL_OWNER;

/** Starts `request` as `call`'s background job; the reply is an execution result with status running and the job id. */
export async function startJob(ctx: ServerContext, request: JobRequest, call: ToolCallContext, note?: string): Promise<{ structured: WireExecutionResult; text: string }> {
  // Behind the execution gate: code the policy blocks is refused before a job id exists.
  const job = await ctx.engine.jobs.submit({ ...request, owner: ownerOf(call) });
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

/** The text an agent reads for a job: its state, output since the offsets asked for, and once it ended the result. */
export function renderJobText(ctx: ServerContext, job: JobSnapshot, asked: boolean): string {
  const wire = toWireJobSnapshot(job);
  const ranS = Math.round(((job.endedAt ? Date.parse(job.endedAt) : Date.now()) - Date.parse(job.startedAt)) / 1000);
  const head = `Job ${job.id}${job.sessionId ? ` (session ${job.sessionId})` : ""}: ${job.status}${job.reason ? ` (${job.reason})` : ""} after ${ranS} s of ${job.timeoutS} s.`;
  const skipped = job.skipped ? `[${Object.entries(job.skipped).map(([s, n]) => `${n} characters of ${s} no longer kept`).join(", ")}]` : undefined;
  const next = `[next since: {"stdout": ${job.next.stdout}, "stderr": ${job.next.stderr}}${job.moreOutput ? "; more output is waiting" : ""}]`;
  if (wire.result) {
    // After polling with offsets, only the newer output is repeated; the result carries the rest.
    const shown = asked ? { ...wire.result, stdout: wire.stdout, stderr: wire.stderr } : wire.result;
    return [head, skipped, renderResultText(shown, describeResult(wire.result, ctx.config)), next].filter(Boolean).join("\n\n");
  }
  const parts = [head, skipped];
  if (wire.stdout) parts.push(wire.stdout.trimEnd());
  if (wire.stderr) parts.push(`[stderr]\n${wire.stderr.trimEnd()}`);
  if (wire.error) parts.push(`[${wire.error.code}] ${wire.error.message}`);
  if (job.status === "running") parts.push(`${next} Call get_job again with these offsets (and wait_s; until: "end" to wait for the end only) for newer output.`);
  return parts.filter(Boolean).join("\n\n");
}

/** A job's wire form with its result's images taken out: they go as MCP image content, as execute_code's do. */
function splitImages(job: JobSnapshot): { wire: z.infer<typeof jobSnapshotSchema>; images?: ToolReply["images"] } {
  const wire = toWireJobSnapshot(job);
  const images = wire.result?.images;
  if (!wire.result || !images?.length) return { wire };
  const { images: _sent, ...result } = wire.result;
  return { wire: { ...wire, result }, images: images.map((image) => ({ mimeType: image.mime, data: image.data_base64 })) };
}

export function createJobTools(ctx: ServerContext): ToolDefinition[] {
  const { engine } = ctx;

  const getJob = defineTool({
    name: "get_job",
    scope: "execute",
    title: "Read a background job",
    description: "Status, new output and (once ended) the result of a background job.",
    input: getJobInput,
    output: getJobToolOutput,
    annotations: { title: "Read a background job", readOnlyHint: true, openWorldHint: false },
    async run(args, call) {
      const owner = ownerOf(call);
      if (args.job_id === undefined) {
        const jobs = engine.jobs.list(owner).map(toWireJob);
        const text = jobs.length === 0 ? "No background jobs. Pass background: true to execute_code or execute_command to start one." : JSON.stringify({ jobs }, null, 2);
        return { structured: { jobs }, text };
      }
      const job = await engine.jobs.get(args.job_id, owner, {
        ...(args.wait_s !== undefined ? { waitMs: args.wait_s * 1000 } : {}),
        ...(args.until ? { until: args.until } : {}),
        ...(args.since ? { since: args.since } : {}),
        ...(call.signal ? { signal: call.signal } : {}),
      });
      const asked = (args.since?.stdout ?? 0) > 0 || (args.since?.stderr ?? 0) > 0;
      const { wire, images } = splitImages(job);
      return { structured: wire, text: renderJobText(ctx, job, asked), ...(images ? { images } : {}) };
    },
  });

  const stopJob = defineTool({
    name: "stop_job",
    scope: "execute",
    title: "Stop a background job",
    description: "Stop a background job; returns its output and result so far.",
    input: stopJobInput,
    output: jobSnapshotToolSchema,
    annotations: { title: "Stop a background job", readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async run(args, call) {
      const job = await engine.jobs.stop(args.job_id, ownerOf(call));
      const { wire, images } = splitImages(job);
      return { structured: wire, text: renderJobText(ctx, job, false), ...(images ? { images } : {}) };
    },
  });

  return [getJob, stopJob];
}
