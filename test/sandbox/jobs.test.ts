// Background jobs through the engine, in real sandboxes: output read while they run, stopping,
// sessions (state, queueing, ending), ownership, and the time limits a job may use.

import { describe, expect, it } from "vitest";
import { isSandgateError } from "../../src/errors/index.js";
import type { JobSnapshot } from "../../src/execution/index.js";
import { createTestEngine, hostProcessesMatching, sleep, useTestEngine, waitFor } from "../helpers.js";

// A short maximum and default keep the tests fast: a job may run 3 s, a call 1 s unless it asks.
const fx = useTestEngine({ MAX_EXECUTION_TIME: "3", SANDGATE_DEFAULT_TIMEOUT: "1", SANDGATE_JOBS_PER_CALLER: "2" }, { python: 1, javascript: 0, bash: 1 });

/** The job once it ended, read with the offsets of each answer so that every wait waits for news. */
async function ended(id: string, owner = "alice"): Promise<JobSnapshot> {
  let snapshot = await fx.engine.jobs.get(id, owner, { waitMs: 10_000 });
  while (snapshot.status === "running") snapshot = await fx.engine.jobs.get(id, owner, { waitMs: 10_000, since: snapshot.next });
  return snapshot;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isSandgateError(error)) return error.code;
    throw error;
  }
  return "no error";
}

describe("background jobs", () => {
  it("returns a job id at once, shows only the output newer than the offsets given, and ends with the full result", async () => {
    const { engine } = fx;
    const code = "import time\nfor i in range(4):\n    print(f'line {i}', flush=True)\n    time.sleep(0.4)\n'finished'";
    const job = engine.jobs.start({ language: "python", code, owner: "alice" });
    expect(job).toMatchObject({ status: "running", sessionId: null, kind: "python", timeoutS: 3 });

    const first = await engine.jobs.get(job.id, "alice", { waitMs: 10_000 });
    expect(first.stdout).toMatch(/^line 0\n/);
    expect(first.status).toBe("running");
    const second = await engine.jobs.get(job.id, "alice", { waitMs: 10_000, since: first.next });
    expect(second.stdout).not.toContain("line 0");
    expect(second.stdout).toMatch(/^line [1-3]\n/);

    let last = second;
    while (last.status === "running") last = await engine.jobs.get(job.id, "alice", { waitMs: 10_000, since: last.next });
    expect(last.status).toBe("done");
    expect(last.result).toMatchObject({ status: "ok", value: "finished" });
    expect(last.result?.stdout).toBe("line 0\nline 1\nline 2\nline 3\n");
    expect(engine.jobs.list("alice").map((j) => j.id)).toContain(job.id);
  });

  it("may run past the per-call default up to the admin maximum, which a call without a timeout may not", async () => {
    const { engine } = fx;
    const code = "import time\ntime.sleep(1.6)\nprint('slept')";
    const call = await engine.execute({ language: "python", code });
    expect(call.status).toBe("timeout");
    const job = engine.jobs.start({ language: "python", code, owner: "alice" });
    expect((await ended(job.id)).result).toMatchObject({ status: "ok", stdout: "slept\n" });
    expect(await codeOf(Promise.resolve().then(() => engine.jobs.start({ language: "python", code, timeoutS: 4, owner: "alice" })))).toBe("LIMIT_EXCEEDED");
  });

  it("stops a running job: status stopped, and its processes are gone from the host", async () => {
    const { engine } = fx;
    const job = engine.jobs.start({ command: "echo started; sleep 987654", owner: "alice" });
    await engine.jobs.get(job.id, "alice", { waitMs: 10_000 });
    expect(await waitFor(() => hostProcessesMatching("987654").length > 0)).toBe(true);
    const stopped = await engine.jobs.stop(job.id, "alice");
    expect(stopped.status).toBe("stopped");
    expect(stopped.reason).toMatch(/stopped by its caller/);
    expect(stopped.stdout).toContain("started");
    expect(await waitFor(() => hostProcessesMatching("987654").length === 0)).toBe(true);
  });

  it("belongs to its caller: another caller can neither read, follow, list nor stop it", async () => {
    const { engine } = fx;
    const job = engine.jobs.start({ command: "sleep 2", owner: "alice" });
    try {
      expect(await codeOf(engine.jobs.get(job.id, "mallory"))).toBe("JOB_NOT_FOUND");
      expect(await codeOf(engine.jobs.stop(job.id, "mallory"))).toBe("JOB_NOT_FOUND");
      expect(await codeOf(Promise.resolve().then(() => engine.jobs.follow(job.id, "stdout", "mallory")))).toBe("JOB_NOT_FOUND");
      expect(engine.jobs.list("mallory")).toEqual([]);
      expect((await engine.jobs.get(job.id, "alice")).status).toBe("running");
    } finally {
      await engine.jobs.stop(job.id, "alice");
    }
  });

  it("refuses a caller's job beyond its cap with TOO_MANY_JOBS while others may still start theirs", async () => {
    const { engine } = fx;
    const a = engine.jobs.start({ command: "sleep 2", owner: "carol" });
    const b = engine.jobs.start({ command: "sleep 2", owner: "carol" });
    try {
      expect(await codeOf(Promise.resolve().then(() => engine.jobs.start({ command: "true", owner: "carol" })))).toBe("TOO_MANY_JOBS");
      const other = engine.jobs.start({ command: "true", owner: "dave" });
      await engine.jobs.stop(other.id, "dave");
    } finally {
      await Promise.all([engine.jobs.stop(a.id, "carol"), engine.jobs.stop(b.id, "carol")]);
    }
  });
});

describe("background jobs in a session", () => {
  it("see the session's variables; a call in the job's language is refused at once while it runs, and sees what the job did after", async () => {
    const { engine } = fx;
    engine.sessions.create("work", "alice");
    try {
      await engine.execute({ language: "python", code: "x = 41", sessionId: "work", owner: "alice" });
      const job = engine.jobs.start({ language: "python", code: "import time\ntime.sleep(1.2)\nx += 1\nx", sessionId: "work", owner: "alice" });
      expect(await codeOf(engine.execute({ language: "python", code: "x", sessionId: "work", owner: "alice", timeoutS: 3 }))).toBe("SESSION_BUSY");
      const done = await ended(job.id);
      expect(done.result).toMatchObject({ status: "ok", value: 42 });
      const after = await engine.execute({ language: "python", code: "x", sessionId: "work", owner: "alice" });
      expect(after).toMatchObject({ status: "ok", value: 42 });
    } finally {
      await engine.sessions.stop("work", "alice");
    }
  });

  it("make a call in the job's language give up at once with SESSION_BUSY naming the job", async () => {
    const { engine } = fx;
    engine.sessions.create("busy", "alice");
    try {
      const job = engine.jobs.start({ language: "python", code: "import time\ntime.sleep(2.5)", sessionId: "busy", owner: "alice" });
      await sleep(200);
      let error: unknown;
      await engine.execute({ language: "python", code: "1", sessionId: "busy", owner: "alice" }).catch((e: unknown) => (error = e));
      expect(isSandgateError(error) && error.code).toBe("SESSION_BUSY");
      expect(String((error as Error).message)).toContain(job.id);
      // The call that gave up never runs later: the job ends and the session is free.
      expect((await ended(job.id)).result?.status).toBe("ok");
      expect(engine.sessions.get("busy", "alice").calls).toBe(1);
    } finally {
      await engine.sessions.stop("busy", "alice");
    }
  });

  it("are stopped when their session is stopped, saying so", async () => {
    const { engine } = fx;
    engine.sessions.create("ending", "alice");
    const job = engine.jobs.start({ command: "echo up; sleep 987653", sessionId: "ending", owner: "alice" });
    await engine.jobs.get(job.id, "alice", { waitMs: 10_000 });
    expect(await waitFor(() => hostProcessesMatching("987653").length > 0)).toBe(true);
    await engine.sessions.stop("ending", "alice");
    const snapshot = await ended(job.id);
    expect(snapshot.status).toBe("stopped");
    expect(snapshot.reason).toMatch(/session ended/);
    expect(await waitFor(() => hostProcessesMatching("987653").length === 0)).toBe(true);
  });

  it("stop at once while they wait for their session's turn, and never run; the job ahead runs on", async () => {
    const { engine } = fx;
    engine.sessions.create("queue", "alice");
    try {
      const ahead = engine.jobs.start({ command: "echo ahead; sleep 987650", sessionId: "queue", owner: "alice" });
      await engine.jobs.get(ahead.id, "alice", { waitMs: 10_000 });
      const waiting = engine.jobs.start({ command: "echo never", sessionId: "queue", owner: "alice" });
      const stopped = await engine.jobs.stop(waiting.id, "alice");
      expect(stopped).toMatchObject({ status: "stopped", reason: "stopped by its caller", stdout: "" });
      expect(stopped.result).toBeUndefined();
      expect((await engine.jobs.get(ahead.id, "alice")).status).toBe("running");
      expect((await engine.jobs.stop(ahead.id, "alice")).status).toBe("stopped");
      expect(engine.sessions.get("queue", "alice").calls).toBe(1);
    } finally {
      await engine.sessions.stop("queue", "alice");
    }
  });

  it("refuse to start in a session the caller does not have", async () => {
    const { engine } = fx;
    engine.sessions.create("mine", "alice");
    try {
      expect(await codeOf(Promise.resolve().then(() => engine.jobs.start({ command: "true", sessionId: "mine", owner: "mallory" })))).toBe("SESSION_NOT_FOUND");
    } finally {
      await engine.sessions.stop("mine", "alice");
    }
  });
});

describe("background jobs and shutdown", () => {
  it("are stopped when the engine closes, and their processes are gone", async () => {
    const own = createTestEngine({ MAX_EXECUTION_TIME: "30" }, { python: 0, javascript: 0, bash: 0 });
    let job: ReturnType<typeof own.engine.jobs.start> | undefined;
    try {
      job = own.engine.jobs.start({ command: "echo up; sleep 987652" });
      await own.engine.jobs.get(job.id, undefined, { waitMs: 10_000 });
      expect(await waitFor(() => hostProcessesMatching("987652").length > 0)).toBe(true);
    } finally {
      await own.close();
    }
    expect(own.engine.jobs.list().map((j) => [j.id, j.status, j.reason])).toEqual([[job?.id, "stopped", "sandgate stopped"]]);
    expect(hostProcessesMatching("987652")).toEqual([]);
  });
});
