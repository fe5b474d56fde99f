// Polling a chatty background job: get_job and GET /jobs/{id} can wait for the job's end instead of
// the first new byte, so a job printing a line a second costs one read, and both answer one shape.

import { afterAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { callTool, connectMcp } from "../fixtures/mcp-client.js";
import { useTestServer } from "../server-helpers.js";

const f = useTestServer({ env: { MAX_EXECUTION_TIME: "30" }, pool: { python: 1, javascript: 0, bash: 0 } });

// Prints a line every 0.15 s for about 1.2 s: long enough that the first line comes well before the end.
const CHATTY = "import time\nfor i in range(8):\n    print(i, flush=True)\n    time.sleep(0.15)\nprint('end')";

interface WireJob {
  job_id: string;
  status: string;
  stdout: string;
  result?: { status: string; stdout: string };
}

describe("waiting for a job's end", () => {
  const clients: Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
  });

  it("get_job with until: \"end\" answers once, when the job ended, with all its output, while the default answers at the first line", async () => {
    const { client } = await connectMcp(f.server.url);
    clients.push(client);
    const chatty = await callTool(client, "execute_code", { language: "python", background: true, code: CHATTY });
    const first = await callTool(client, "get_job", { job_id: chatty.structuredContent.job_id as string, wait_s: 25 });
    expect(first.structuredContent.status).toBe("running");

    const started = await callTool(client, "execute_code", { language: "python", background: true, code: CHATTY });
    const read = await callTool(client, "get_job", { job_id: started.structuredContent.job_id as string, wait_s: 25, until: "end" });
    expect(read.isError).toBeFalsy();
    const job = read.structuredContent as unknown as WireJob;
    expect(job.status).toBe("done");
    expect(job.stdout).toBe("0\n1\n2\n3\n4\n5\n6\n7\nend\n");
    expect(job.result?.status).toBe("ok");
  }, 60_000);

  it("until: \"end\" still returns when wait_s runs out, with the output so far", async () => {
    const { client } = await connectMcp(f.server.url);
    clients.push(client);
    const started = await callTool(client, "execute_command", { command: "echo begun; sleep 20", background: true });
    const id = started.structuredContent.job_id as string;
    const read = await callTool(client, "get_job", { job_id: id, wait_s: 1, until: "end" });
    expect(read.structuredContent).toMatchObject({ status: "running", stdout: "begun\n" });
    await callTool(client, "stop_job", { job_id: id });
  }, 30_000);

  it("GET /jobs/{id}?until=end waits for the end too, and answers the object get_job returns over MCP", async () => {
    const { client } = await connectMcp(f.server.url);
    clients.push(client);
    const started = await f.api<{ job_id: string }>("/execute", { json: { language: "python", background: true, code: CHATTY } });
    expect(started.status).toBe(202);
    const rest = await f.api<WireJob>(`/jobs/${started.body.job_id}?wait=25&until=end`);
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ status: "done", stdout: "0\n1\n2\n3\n4\n5\n6\n7\nend\n" });

    // The same job read over MCP by another caller is not found; read one of MCP's own instead.
    const mcpJob = await callTool(client, "execute_code", { language: "python", background: true, code: "print('x')" });
    const id = mcpJob.structuredContent.job_id as string;
    const viaMcp = (await callTool(client, "get_job", { job_id: id, wait_s: 25, until: "end" })).structuredContent;
    expect(Object.keys(viaMcp).sort()).toEqual(Object.keys(rest.body).sort());
    expect(Object.keys(viaMcp.result as object).sort()).toEqual(Object.keys(rest.body.result as object).sort());
  }, 60_000);

  it("an unknown until is refused on both surfaces", async () => {
    const { client } = await connectMcp(f.server.url);
    clients.push(client);
    const started = await callTool(client, "execute_code", { language: "python", background: true, code: "print(1)" });
    const refused = await client.callTool({ name: "get_job", arguments: { job_id: started.structuredContent.job_id as string, until: "forever" } }).catch((error: unknown) => error);
    expect(JSON.stringify(refused)).toMatch(/until/);
    const rest = await f.api(`/jobs/${started.structuredContent.job_id as string}?until=forever`);
    expect(rest.status).toBe(400);
  });
});
