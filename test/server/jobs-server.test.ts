// Background jobs through the real server on port 0: REST (202, /jobs, live output streaming,
// DELETE), the MCP tools with the SDK client (which checks results against the output schemas),
// callers kept apart by API key, and the per-caller cap as a 429.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, describe, expect, it } from "vitest";
import { callTool, connectMcp, toolText } from "../fixtures/mcp-client.js";
import { bearer, expectError, startTestServer, useTestServer } from "../server-helpers.js";
import { createTestEngine, hostProcessesMatching, waitFor } from "../helpers.js";

const ALICE = "alice-key-0123456789abcdef";
const BOB = "bob-key-0123456789abcdef00";

const rest = useTestServer({
  env: { MAX_EXECUTION_TIME: "4", SANDGATE_DEFAULT_TIMEOUT: "1", SANDGATE_JOBS_PER_CALLER: "2" },
  pool: { python: 1, javascript: 0, bash: 1 },
  server: { apiKeys: { alice: ALICE, bob: BOB } },
});

interface WireJob {
  job_id: string;
  status: string;
  stdout: string;
  next: { stdout: number; stderr: number };
  reason?: string;
  result?: { status: string; stdout: string; value?: unknown };
}

async function startJob(key: string, body: Record<string, unknown>): Promise<string> {
  const started = await rest.api<{ status: string; job_id: string }>("/execute", { json: { ...body, background: true }, headers: bearer(key) });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  expect(started.body.status).toBe("running");
  return started.body.job_id;
}

async function endedJob(key: string, id: string): Promise<WireJob> {
  let job = (await rest.api<WireJob>(`/jobs/${id}?wait=10`, { headers: bearer(key) })).body;
  while (job.status === "running") {
    job = (await rest.api<WireJob>(`/jobs/${id}?wait=10&since_stdout=${job.next.stdout}&since_stderr=${job.next.stderr}`, { headers: bearer(key) })).body;
  }
  return job;
}

describe("background jobs over REST", () => {
  it("answer POST /execute with 202 and a job id, and GET /jobs/{id} gives the output so far and then the result", async () => {
    const id = await startJob(ALICE, { language: "python", code: "import time\nprint('one', flush=True)\ntime.sleep(1.5)\nprint('two')\n7" });
    const listed = await rest.api<{ jobs: { job_id: string }[] }>("/jobs", { headers: bearer(ALICE) });
    expect(listed.body.jobs.map((j) => j.job_id)).toContain(id);
    const first = await rest.api<WireJob>(`/jobs/${id}?wait=10`, { headers: bearer(ALICE) });
    expect(first.body).toMatchObject({ status: "running", stdout: "one\n" });
    const done = await endedJob(ALICE, id);
    expect(done.status).toBe("done");
    // Past the 1 s per-call default: a job gets the admin maximum.
    expect(done.result).toMatchObject({ status: "ok", stdout: "one\ntwo\n", value: 7 });
  });

  it("streams a job's stdout live at /jobs/{id}/output/stdout and ends the stream with the job", async () => {
    const id = await startJob(ALICE, { language: "python", code: "import time\nprint('early', flush=True)\ntime.sleep(1.5)\nprint('late')" });
    const response = await fetch(`${rest.server.url}/jobs/${id}/output/stdout`, { headers: bearer(ALICE) });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes("early")) {
      const chunk = await reader.read();
      expect(chunk.done).toBe(false);
      text += decoder.decode(chunk.value, { stream: true });
    }
    // The first line came while the job still ran: the stream follows it, it is not read after the end.
    expect((await rest.api<WireJob>(`/jobs/${id}`, { headers: bearer(ALICE) })).body.status).toBe("running");
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
    expect(text).toBe("early\nlate\n");
    expect((await rest.api<WireJob>(`/jobs/${id}`, { headers: bearer(ALICE) })).body.status).toBe("done");
  });

  it("stops a job on DELETE /jobs/{id}, and its processes are gone", async () => {
    const id = await startJob(ALICE, { language: "python", code: "import subprocess\nsubprocess.run(['sleep', '876543'])" });
    expect(await waitFor(() => hostProcessesMatching("876543").length > 0, 10_000)).toBe(true);
    const stopped = await rest.api<WireJob>(`/jobs/${id}`, { method: "DELETE", headers: bearer(ALICE) });
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ status: "stopped", reason: expect.stringContaining("stopped by its caller") });
    expect(await waitFor(() => hostProcessesMatching("876543").length === 0)).toBe(true);
  });

  it("keeps callers apart: another API key gets 404 JOB_NOT_FOUND and cannot stop, follow or list the job", async () => {
    const id = await startJob(ALICE, { language: "bash", code: "sleep 3" });
    try {
      expectError(await rest.api(`/jobs/${id}`, { headers: bearer(BOB) }), 404, "JOB_NOT_FOUND");
      expectError(await rest.api(`/jobs/${id}`, { method: "DELETE", headers: bearer(BOB) }), 404, "JOB_NOT_FOUND");
      expectError(await rest.api(`/jobs/${id}/output/stdout`, { headers: bearer(BOB) }), 404, "JOB_NOT_FOUND");
      expect((await rest.api<{ jobs: unknown[] }>("/jobs", { headers: bearer(BOB) })).body.jobs).toEqual([]);
      expect((await rest.api<WireJob>(`/jobs/${id}`, { headers: bearer(ALICE) })).body.status).toBe("running");
    } finally {
      await rest.api(`/jobs/${id}`, { method: "DELETE", headers: bearer(ALICE) });
    }
  });

  it("refuses a caller's job beyond the per-caller cap with 429 TOO_MANY_JOBS and a Retry-After", async () => {
    const ids = [await startJob(BOB, { language: "bash", code: "sleep 3" }), await startJob(BOB, { language: "bash", code: "sleep 3" })];
    try {
      const refused = await rest.api("/execute", { json: { language: "bash", code: "true", background: true }, headers: bearer(BOB) });
      const error = expectError(refused, 429, "TOO_MANY_JOBS");
      expect(error.message).toMatch(/stop one/);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    } finally {
      await Promise.all(ids.map((id) => rest.api(`/jobs/${id}`, { method: "DELETE", headers: bearer(BOB) })));
    }
  });

  it("refuses a timeout above the admin maximum for a job as for a call", async () => {
    expectError(await rest.api("/execute", { json: { language: "bash", code: "true", background: true, timeout: 5 }, headers: bearer(ALICE) }), 400, "LIMIT_EXCEEDED");
    const policy = await rest.api<{ limits: Record<string, number> }>("/security/policy", { headers: bearer(ALICE) });
    expect(policy.body.limits).toMatchObject({ max_execution_time_s: 4, default_execution_time_s: 1 });
  });
});

describe("background jobs over MCP", () => {
  const clients: Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
  });

  it("start with background: true, are polled with get_job (wait_s, since) and listed, and stop with stop_job", async () => {
    const { client } = await connectMcp(rest.server.url, { headers: bearer(ALICE) });
    clients.push(client);
    const started = await callTool(client, "execute_code", { language: "python", code: "import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.4)", background: true });
    expect(started.isError).toBeFalsy();
    expect(started.structuredContent).toMatchObject({ status: "running" });
    const id = started.structuredContent.job_id as string;
    expect(toolText(started)).toContain(id);

    const polled = await callTool(client, "get_job", { job_id: id, wait_s: 10 });
    const job = polled.structuredContent as unknown as WireJob;
    expect(job.stdout).toMatch(/^0\n/);
    let last = job;
    while (last.status === "running") last = (await callTool(client, "get_job", { job_id: id, wait_s: 10, since: last.next })).structuredContent as unknown as WireJob;
    expect(last.result).toMatchObject({ status: "ok", stdout: "0\n1\n2\n" });

    const listed = await callTool(client, "get_job", {});
    expect((listed.structuredContent.jobs as { job_id: string }[]).map((j) => j.job_id)).toContain(id);

    const long = await callTool(client, "execute_command", { command: "echo begun; sleep 3", background: true });
    const longId = long.structuredContent.job_id as string;
    const stopped = await callTool(client, "stop_job", { job_id: longId });
    expect(stopped.structuredContent).toMatchObject({ job_id: longId, status: "stopped" });

    const { client: other } = await connectMcp(rest.server.url, { headers: bearer(BOB) });
    clients.push(other);
    const foreign = await callTool(other, "get_job", { job_id: id });
    expect(foreign.isError).toBe(true);
    expect(toolText(foreign)).toContain("JOB_NOT_FOUND");
  });

  it("refuse a session's call in the job's language at once, saying which job holds it; once the job ended the call sees what it did", async () => {
    const { client } = await connectMcp(rest.server.url, { headers: bearer(ALICE) });
    clients.push(client);
    await callTool(client, "execute_code", { language: "python", code: "n = 1", session_id: "jobs-s" });
    const started = await callTool(client, "execute_code", { language: "python", code: "import time\ntime.sleep(2.5)\nn = 2", session_id: "jobs-s", background: true });
    const id = started.structuredContent.job_id as string;
    const busy = await callTool(client, "execute_code", { language: "python", code: "n", session_id: "jobs-s" });
    expect(busy.isError).toBe(true);
    expect(toolText(busy)).toContain(id);
    expect(toolText(busy)).toContain("SESSION_BUSY");
    expect(toolText(busy)).toContain("stop_job");
    let waited = busy;
    for (let tries = 0; waited.isError === true && tries < 40; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      waited = await callTool(client, "execute_code", { language: "python", code: "n", session_id: "jobs-s" });
    }
    expect(waited.structuredContent).toMatchObject({ status: "ok", value: 2 });
    await callTool(client, "stop_session", { session_id: "jobs-s" });
  });
});

describe("background jobs of an MCP session without an API key", () => {
  it("go on when that MCP session ends, since they are the caller's, and another MCP session of the caller stops them", async () => {
    const fx = createTestEngine({ MAX_EXECUTION_TIME: "30" }, { python: 0, javascript: 0, bash: 1 });
    const server = await startTestServer(fx.engine, fx.config);
    try {
      const { client, transport } = await connectMcp(server.url);
      const started = await callTool(client, "execute_command", { command: "sleep 876501", background: true });
      expect(started.structuredContent).toMatchObject({ status: "running" });
      const jobId = (started.structuredContent as { job_id: string }).job_id;
      expect(await waitFor(() => hostProcessesMatching("876501").length > 0, 10_000)).toBe(true);
      await transport.terminateSession();
      await client.close();
      await new Promise((r) => setTimeout(r, 1000));
      expect(hostProcessesMatching("876501").length).toBeGreaterThan(0);
      const { client: again } = await connectMcp(server.url);
      try {
        expect((await callTool(again, "get_job", { job_id: jobId })).structuredContent).toMatchObject({ status: "running" });
        await callTool(again, "stop_job", { job_id: jobId });
      } finally {
        await again.close();
      }
      expect(await waitFor(() => hostProcessesMatching("876501").length === 0, 10_000)).toBe(true);
      expect(await waitFor(() => fx.engine.jobs.running === 0)).toBe(true);
    } finally {
      await server.close();
      await fx.close();
    }
  });
});
