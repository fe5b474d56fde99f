// The raw REST route of background jobs: follow one stream's output live as chunked text. Listing,
// reading and stopping jobs are the jobs feature's operations (src/features/jobs).

import { z } from "zod";
import { SandgateError } from "../../errors/index.js";
import { isSavedStream } from "../output-resources.js";
import type { ServerContext } from "../context.js";
import { defineRoute, type RestRoute } from "./define-route.js";

const whole = z.string().regex(/^\d+$/, "a whole number");

export function jobOutputRoute(ctx: ServerContext): RestRoute {
  const { engine } = ctx;
  return defineRoute({
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
  });
}
