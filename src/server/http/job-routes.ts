// The REST routes of background jobs: list, read (long-poll with ?wait=, newer output with
// ?since_*=), follow one stream's output live as chunked text, and stop.

import { z } from "zod";
import { SandgateError } from "../../errors/index.js";
import { isSavedStream } from "../output-resources.js";
import type { ServerContext } from "../context.js";
import { JOB_WAIT_UNTIL, jobSnapshotSchema, listJobsOutput, MAX_JOB_WAIT_S, toWireJob, toWireJobSnapshot } from "../job-wire.js";
import { defineRoute, type RestRoute } from "./define-route.js";

const whole = z.string().regex(/^\d+$/, "a whole number");

export function jobRoutes(ctx: ServerContext): RestRoute[] {
  const { engine } = ctx;
  return [
    defineRoute({
      method: "get",
      path: "/jobs",
      scope: "execute",
      tag: "jobs",
      summary: "List your background jobs, running and recently finished (each caller sees only its own)",
      response: listJobsOutput,
      handle: async ({ owner }) => ({ jobs: engine.jobs.list(owner).map(toWireJob) }),
    }),
    defineRoute({
      method: "get",
      path: "/jobs/:job_id",
      scope: "execute",
      tag: "jobs",
      summary: "A background job: status, output since the offsets given, and its result once it ended",
      description: `?wait=N waits up to N seconds (at most ${MAX_JOB_WAIT_S}) for new output or the end (?until=end: for the end only); ?since_stdout= and ?since_stderr= take the previous answer's next offsets. The same object as get_job's result over MCP.`,
      query: z.object({
        wait: z.string().regex(/^\d+(\.\d+)?$/, "a number of seconds").optional().describe(`Seconds to wait for news, at most ${MAX_JOB_WAIT_S}`),
        until: z.enum(JOB_WAIT_UNTIL).optional().describe('What ends the wait: "output" (default), the first new output; "end", only the job\'s end'),
        since_stdout: whole.optional().describe("Return stdout after this offset (next.stdout of the last answer)"),
        since_stderr: whole.optional().describe("Return stderr after this offset (next.stderr of the last answer)"),
      }),
      response: jobSnapshotSchema,
      handle: async ({ params, query, owner, signal }) => {
        const wait = query.wait === undefined ? 0 : Number(query.wait);
        if (wait > MAX_JOB_WAIT_S) {
          throw new SandgateError("INVALID_INPUT", `query parameter wait: at most ${MAX_JOB_WAIT_S} seconds`, { data: { field: "wait", location: "query parameter" } });
        }
        const job = await engine.jobs.get(params.job_id, owner, {
          waitMs: wait * 1000,
          ...(query.until ? { until: query.until } : {}),
          signal,
          since: {
            ...(query.since_stdout !== undefined ? { stdout: Number(query.since_stdout) } : {}),
            ...(query.since_stderr !== undefined ? { stderr: Number(query.since_stderr) } : {}),
          },
        });
        return toWireJobSnapshot(job);
      },
    }),
    defineRoute({
      method: "get",
      path: "/jobs/:job_id/output/:stream",
      scope: "execute",
      tag: "jobs",
      summary: "Follow a background job's stdout or stderr live: chunked plain text that ends when the job ends",
      description: "?since= starts after that offset (default: from the start of what is kept). The result itself: GET /jobs/{job_id}.",
      query: z.object({ since: whole.optional().describe("Start after this offset") }),
      response: z.string(),
      rawResponse: { contentType: "text/plain", description: "the stream's text as the job writes it, sent as it comes; the response ends when the job ends" },
      handle: async ({ params, query, owner, signal, c }) => {
        const stream = params.stream;
        if (!isSavedStream(stream)) throw new SandgateError("INVALID_INPUT", `no output stream ${JSON.stringify(stream)}; use stdout or stderr`, { data: { field: "stream" } });
        const chunks = engine.jobs.follow(params.job_id, stream, owner, query.since === undefined ? 0 : Number(query.since), signal);
        const encoder = new TextEncoder();
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            const next = await chunks.next();
            if (next.done) controller.close();
            else controller.enqueue(encoder.encode(next.value));
          },
          async cancel() {
            await chunks.return(undefined);
          },
        });
        return c.body(body, 200, { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff", "cache-control": "no-store" });
      },
    }),
    defineRoute({
      method: "delete",
      path: "/jobs/:job_id",
      scope: "execute",
      tag: "jobs",
      summary: "Stop a background job; answers once it stopped, with its output and result so far",
      response: jobSnapshotSchema,
      handle: async ({ params, owner }) => toWireJobSnapshot(await engine.jobs.stop(params.job_id, owner)),
    }),
  ];
}
