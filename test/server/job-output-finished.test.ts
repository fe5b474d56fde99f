// A finished background job keeps only what one answer shows of each stream (the display limit),
// not its whole live window: many finished jobs, kept for minutes, must not hold megabytes each.
// Through the real server: reading a finished job from offset 0 skips to its last characters,
// and its result still carries the full output's pointer.

import { describe, expect, it } from "vitest";
import { useTestServer } from "../server-helpers.js";

const f = useTestServer({ env: { MAX_OUTPUT_SIZE: "1000" }, pool: { python: 1, javascript: 0, bash: 0 } });

interface WireJob {
  status: string;
  stdout: string;
  stderr: string;
  next: { stdout: number; stderr: number };
  skipped?: { stdout?: number; stderr?: number };
  result?: { full_output?: { stdout?: string } };
}

describe("a finished background job's output", () => {
  it("keeps only the last display-limit characters of each stream once the job ended", async () => {
    const started = await f.api<{ job_id: string }>("/execute", {
      json: { language: "python", background: true, code: "import sys\nsys.stdout.write('a' * 4000 + 'b' * 1000)\nsys.stderr.write('e' * 3000)" },
    });
    expect(started.status).toBe(202);
    let job = (await f.api<WireJob>(`/jobs/${started.body.job_id}?wait=20`)).body;
    while (job.status === "running") job = (await f.api<WireJob>(`/jobs/${started.body.job_id}?wait=20&since_stdout=${job.next.stdout}&since_stderr=${job.next.stderr}`)).body;
    const ended = (await f.api<WireJob>(`/jobs/${started.body.job_id}?since_stdout=0&since_stderr=0`)).body;
    expect(ended.status).toBe("done");
    expect(ended.stdout).toBe("b".repeat(1000));
    expect(ended.skipped).toEqual({ stdout: 4000, stderr: 2000 });
    expect(ended.stderr).toBe("e".repeat(1000));
    expect(ended.next).toEqual({ stdout: 5000, stderr: 3000 });
    expect(ended.result?.full_output?.stdout).toMatch(/^sandgate:\/\/outputs\//);
  });
});
