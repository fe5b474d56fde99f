// A background job holds only its own runner: the session's files answer at once while it runs
// (reading its progress file is the natural next step), a call in another language runs, and a
// call in the job's language is refused at once, naming the job and how to stop it. Engine and REST.

import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { isSandgateError } from "../../src/errors/index.js";
import { bearer, expectError, useTestServer } from "../server-helpers.js";
import { useTestEngine } from "../helpers.js";

/** Generous: the machine is shared; before the fix each of these waited out the job's 30 s. */
const AT_ONCE_MS = 8000;

/** A job that writes its progress file, then runs on for 30 s. */
const LONG_JOB = "import time\nopen('progress.txt', 'w').write('step 1 of 30\\n')\nprint('started', flush=True)\ntime.sleep(30)";

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work;
  return { value, ms: performance.now() - started };
}

async function failureOf(work: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  try {
    await work;
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
  throw new Error("the call ran instead of being refused");
}

describe("a session running a background job, through the engine", () => {
  const fx = useTestEngine({ MAX_EXECUTION_TIME: "40" }, { python: 0, javascript: 0, bash: 0 });

  it("answers file reads, writes, listings, uploads and downloads at once while the job runs", async () => {
    const { engine } = fx;
    engine.sessions.create("progress", "alice");
    const job = engine.jobs.start({ language: "python", code: LONG_JOB, sessionId: "progress", owner: "alice" });
    try {
      await engine.jobs.get(job.id, "alice", { waitMs: 20_000 });
      expect((await engine.jobs.get(job.id, "alice")).status).toBe("running");

      const listed = await timed(engine.files.list("progress", undefined, "alice"));
      expect(listed.value.entries.map((e) => e.name)).toContain("progress.txt");
      expect(listed.ms).toBeLessThan(AT_ONCE_MS);

      const read = await timed(engine.files.read("progress", "progress.txt", "utf8", "alice"));
      expect(read.value.content).toBe("step 1 of 30\n");
      expect(read.ms).toBeLessThan(AT_ONCE_MS);

      const written = await timed(engine.files.write("progress", "note.txt", "hello", "utf8", "alice"));
      expect(written.value.size).toBe(5);
      expect(written.ms).toBeLessThan(AT_ONCE_MS);

      const uploaded = await timed(engine.files.upload("progress", "data.csv", Readable.from([Buffer.from("a,b\n1,2\n")]), 1 << 20, { owner: "alice", timeoutMs: 20_000 }));
      expect(uploaded.value.size).toBe(8);
      expect(uploaded.ms).toBeLessThan(AT_ONCE_MS);

      const downloaded = await timed(
        (async () => {
          const file = await engine.files.download("progress", "progress.txt", { owner: "alice", timeoutMs: 20_000 });
          const chunks: Buffer[] = [];
          for await (const chunk of file.body) chunks.push(Buffer.from(chunk as Uint8Array));
          return Buffer.concat(chunks).toString("utf8");
        })(),
      );
      expect(downloaded.value).toBe("step 1 of 30\n");
      expect(downloaded.ms).toBeLessThan(AT_ONCE_MS);

      expect((await engine.jobs.get(job.id, "alice")).status).toBe("running");
    } finally {
      await engine.jobs.stop(job.id, "alice");
      await engine.sessions.stop("progress", "alice");
    }
  });

  it("refuses a call in the job's language at once with SESSION_BUSY naming the job and how to stop it, and runs a call in another language", async () => {
    const { engine } = fx;
    engine.sessions.create("held", "alice");
    const job = engine.jobs.start({ language: "python", code: LONG_JOB, sessionId: "held", owner: "alice" });
    try {
      await engine.jobs.get(job.id, "alice", { waitMs: 20_000 });
      const refused = await failureOf(engine.execute({ language: "python", code: "1", sessionId: "held", owner: "alice", timeoutS: 20 }));
      expect(isSandgateError(refused.error) && refused.error.code).toBe("SESSION_BUSY");
      const message = (refused.error as Error).message;
      expect(message).toContain(job.id);
      expect(message).toContain("stop_job");
      expect(message).toContain(`DELETE /jobs/${job.id}`);
      expect(refused.ms).toBeLessThan(AT_ONCE_MS);

      const other = await timed(engine.executeCommand({ command: "cat progress.txt", sessionId: "held", owner: "alice", timeoutS: 20 }));
      expect(other.value).toMatchObject({ status: "ok", stdout: "step 1 of 30\n" });
      expect(other.ms).toBeLessThan(AT_ONCE_MS + 5000);

      // The refused call never runs later: it did not queue behind the job.
      const stopped = await engine.jobs.stop(job.id, "alice");
      expect(stopped.status).toBe("stopped");
      expect(engine.sessions.get("held", "alice").calls).toBe(2);
    } finally {
      await engine.sessions.stop("held", "alice");
    }
  });
});

const KEY = "alice-key-0123456789abcdef";

describe("a session running a background job, over REST", () => {
  const rest = useTestServer({ env: { MAX_EXECUTION_TIME: "40" }, pool: { python: 0, javascript: 0, bash: 0 }, server: { apiKeys: { alice: KEY } } });

  it("lists, reads, uploads and downloads the session's files at once, and answers a call in the job's language with 409 SESSION_BUSY at once", async () => {
    const auth = bearer(KEY);
    expect((await rest.api("/sessions", { json: { session_id: "rest-progress" }, headers: auth })).status).toBe(201);
    const started = await rest.api<{ job_id: string }>("/execute", { json: { language: "python", code: LONG_JOB, session_id: "rest-progress", background: true }, headers: auth });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const id = started.body.job_id;
    try {
      const first = await rest.api<{ status: string; stdout: string }>(`/jobs/${id}?wait=20`, { headers: auth });
      expect(first.body).toMatchObject({ status: "running", stdout: "started\n" });

      const listed = await timed(rest.api<{ entries: { name: string }[] }>("/sessions/rest-progress/files", { headers: auth }));
      expect(listed.value.status).toBe(200);
      expect(listed.value.body.entries.map((e) => e.name)).toContain("progress.txt");
      expect(listed.ms).toBeLessThan(AT_ONCE_MS);

      const read = await timed(rest.api<{ content: string }>("/sessions/rest-progress/files/content?path=progress.txt&encoding=utf8", { headers: auth }));
      expect(read.value.body.content).toBe("step 1 of 30\n");
      expect(read.ms).toBeLessThan(AT_ONCE_MS);

      const upload = await timed(
        fetch(`${rest.server.url}/sessions/rest-progress/files/content?path=input.bin`, {
          method: "PUT",
          headers: { ...auth, "content-type": "application/octet-stream" },
          body: "raw bytes",
        }),
      );
      expect(upload.value.status).toBe(200);
      expect(upload.ms).toBeLessThan(AT_ONCE_MS);

      const download = await timed(fetch(`${rest.server.url}/sessions/rest-progress/files/content?path=progress.txt`, { headers: auth }).then(async (r) => ({ status: r.status, text: await r.text() })));
      expect(download.value).toEqual({ status: 200, text: "step 1 of 30\n" });
      expect(download.ms).toBeLessThan(AT_ONCE_MS);

      const busy = await timed(rest.api("/execute", { json: { language: "python", code: "1", session_id: "rest-progress", timeout: 20 }, headers: auth }));
      const error = expectError(busy.value, 409, "SESSION_BUSY");
      expect(error.message).toContain(id);
      expect(error.message).toContain(`DELETE /jobs/${id}`);
      expect(busy.ms).toBeLessThan(AT_ONCE_MS);

      expect((await rest.api<{ status: string }>(`/jobs/${id}`, { headers: auth })).body.status).toBe("running");
    } finally {
      await rest.api(`/jobs/${id}`, { method: "DELETE", headers: auth });
      await rest.api("/sessions/rest-progress", { method: "DELETE", headers: auth });
    }
  });
});
