// engine.jobs: background jobs, calls that return a job id at once and run on with the limits of
// any call; their output is read while they run, they can be stopped, and they belong to their caller.

import { randomBytes } from "node:crypto";
import { isSandgateError, publicError, SandgateError } from "../errors/index.js";
import type { OutputStream } from "../sandbox/index.js";
import type { Logger } from "../util/logger.js";
import { JobOutput } from "./job-output.js";
import type { ExecuteRequest } from "./request.js";
import type { ExecutionResult } from "./result-builder.js";
import type { RunVerdict } from "./hooks.js";
import { LOCAL_OWNER } from "./sessions.js";

/** A call to run as a job: code (language) or a shell line (command); output and cancellation are the job's own. */
export type JobRequest = Omit<ExecuteRequest, "signal" | "onOutput"> | JobCommandRequest;

export interface JobCommandRequest extends Omit<ExecuteRequest, "signal" | "onOutput" | "code" | "language"> {
  command: string;
  workingDirectory?: string;
}

/** running: started or waiting for its session or for room; done: the run ended (any result status); stopped: stop(), its session ended or sandgate stopped; failed: it could not run. */
export type JobStatus = "running" | "done" | "stopped" | "failed";

export interface JobInfo {
  id: string;
  owner: string;
  status: JobStatus;
  sessionId: string | null;
  /** The language, or "command" for a shell line. */
  kind: string;
  /** The wall-clock limit the job runs with, seconds. */
  timeoutS: number;
  startedAt: string;
  endedAt?: string;
  /** Why a job stopped. */
  reason?: string;
}

export interface JobSnapshot extends JobInfo {
  /** Output since the offsets asked for (at most `maxChars` per stream). */
  stdout: string;
  stderr: string;
  /** Offsets to pass as `since` next time. */
  next: Record<OutputStream, number>;
  /** Characters asked for that are no longer kept (the full output is saved with the result when long). */
  skipped?: Partial<Record<OutputStream, number>>;
  /** More output is already there past `next` (the answer was cut). */
  moreOutput: boolean;
  /** The run's full result, once it ended (done, or stopped after it started). */
  result?: ExecutionResult;
  /** Why it failed to run. */
  error?: { code: string; message: string };
}

export interface JobReadOptions {
  /** Wait up to this long for the job to end or for output past `since`. */
  waitMs?: number;
  /** What ends the wait: new output or the end (default), or only the end, so a chatty job costs one read. */
  until?: "output" | "end";
  since?: Partial<Record<OutputStream, number>>;
  /** Characters of each stream returned at most; default the display limit. */
  maxChars?: number;
  /** Ends the wait early (the caller went away). */
  signal?: AbortSignal;
}

export interface JobsOptions {
  maxPerOwner: number;
  max: number;
  keepFinishedMs: number;
  /** The timeout of a job that names none (the admin maximum), seconds. */
  defaultTimeoutS: number;
  /** Characters of output a job answer shows per stream by default. */
  displayChars: number;
  /** Characters of each stream kept while the job runs. */
  windowChars: number;
  log: Logger;
}

/** What the engine lends its jobs: checking and running a call, and whether a session ended. */
export interface JobRunner {
  validate(request: JobRequest): void;
  /** The gate's verdict on a job before it starts: throws POLICY_BLOCKED; approval is asked when it runs. */
  screen(request: JobRequest): Promise<RunVerdict | undefined>;
  run(request: JobRequest, signal: AbortSignal, onOutput: (stream: OutputStream, text: string) => void, screened?: RunVerdict): Promise<ExecutionResult>;
  /** Why `owner`'s session `id` ended, if it did. */
  sessionEnded(owner: string, id: string): string | undefined;
}

/** Finished jobs one owner keeps at most (the oldest go first), besides the TTL. */
const KEEP_FINISHED_PER_OWNER = 50;
/**
 * Finished jobs of one owner whose results keep their images (each result may hold
 * limits.maxImagesPerCall of limits.maxImageBytes); older results drop them and say so.
 */
const KEEP_IMAGES_PER_OWNER = 4;

class Job {
  readonly controller = new AbortController();
  readonly started = Date.now();
  status: JobStatus = "running";
  ended?: number;
  reason?: string;
  stopReason?: string;
  result?: ExecutionResult;
  error?: { code: string; message: string };
  finished!: Promise<void>;
  dropTimer?: NodeJS.Timeout;

  constructor(
    readonly id: string,
    readonly owner: string,
    readonly sessionId: string | null,
    readonly kind: string,
    readonly timeoutS: number,
    readonly output: JobOutput,
  ) {}

  info(): JobInfo {
    return {
      id: this.id,
      owner: this.owner,
      status: this.status,
      sessionId: this.sessionId,
      kind: this.kind,
      timeoutS: this.timeoutS,
      startedAt: new Date(this.started).toISOString(),
      ...(this.ended !== undefined ? { endedAt: new Date(this.ended).toISOString() } : {}),
      ...(this.reason !== undefined ? { reason: this.reason } : {}),
    };
  }
}

export class EngineJobs {
  private readonly jobs = new Map<string, Job>();
  private closing = false;

  /** @internal Built by the Engine. */
  constructor(
    private readonly runner: JobRunner,
    private readonly options: JobsOptions,
    private readonly assertOpen: () => void,
  ) {}

  /**
   * Starts a job for `request.owner` and returns at once. Bad input throws as the call would;
   * TOO_MANY_JOBS when the caller or the server has its maximum running.
   */
  start(request: JobRequest, screened?: RunVerdict): JobInfo {
    this.assertOpen();
    const owner = request.owner ?? LOCAL_OWNER;
    const timeoutS = request.timeoutS ?? this.options.defaultTimeoutS;
    const withTimeout = { ...request, owner, timeoutS };
    this.runner.validate(withTimeout);
    const running = [...this.jobs.values()].filter((j) => j.status === "running");
    const own = running.filter((j) => j.owner === owner);
    if (own.length >= this.options.maxPerOwner) {
      throw new SandgateError(
        "TOO_MANY_JOBS",
        `you have ${own.length} background jobs running, the most one caller may have; wait for one to finish (get_job) or stop one (stop_job)`,
        { data: { max: this.options.maxPerOwner, retry_after: this.soonestEndS(own) } },
      );
    }
    if (running.length >= this.options.max) {
      throw new SandgateError("TOO_MANY_JOBS", `the server runs its maximum of ${this.options.max} background jobs; retry later`, {
        data: { max: this.options.max, retry_after: this.soonestEndS(running) },
      });
    }
    const kind = "command" in request ? "command" : request.language;
    const job = new Job(`job_${randomBytes(12).toString("hex")}`, owner, request.sessionId ?? null, kind, timeoutS, new JobOutput(this.options.windowChars));
    this.jobs.set(job.id, job);
    job.finished = this.runner
      .run(withTimeout, job.controller.signal, (stream, text) => job.output.append(stream, text), screened)
      .then(
        (result) => this.settle(job, result, undefined),
        (error: unknown) => this.settle(job, undefined, error),
      );
    return job.info();
  }

  /**
   * start() behind the execution gate: code the security policy blocks is refused at once
   * (POLICY_BLOCKED) and no job is made; code that needs approval starts and waits for it as a job.
   */
  async submit(request: JobRequest): Promise<JobInfo> {
    this.assertOpen();
    const owner = request.owner ?? LOCAL_OWNER;
    this.runner.validate({ ...request, owner });
    const screened = await this.runner.screen({ ...request, owner });
    return this.start(request, screened);
  }

  private settle(job: Job, result: ExecutionResult | undefined, error: unknown): void {
    job.ended = Date.now();
    const sessionEnd = job.sessionId === null ? undefined : this.runner.sessionEnded(job.owner, job.sessionId);
    if (result) job.result = result;
    if (job.stopReason !== undefined) {
      job.status = "stopped";
      job.reason = job.stopReason;
    } else if (sessionEnd !== undefined && (result?.status === "killed" || (isSandgateError(error) && error.code === "SESSION_EXPIRED"))) {
      job.status = "stopped";
      job.reason = `its session ended (${sessionEnd})`;
    } else if (result) {
      job.status = "done";
    } else {
      job.status = "failed";
      const shown = publicError(error, this.options.log);
      job.error = { code: shown.code, message: shown.message };
    }
    // What one answer shows at most is kept of each stream: many finished jobs must not hold their whole windows.
    // Ended after the status is settled: a reader the end wakes sees the job's final state.
    job.output.end(this.options.displayChars);
    job.dropTimer = setTimeout(() => this.jobs.delete(job.id), this.options.keepFinishedMs);
    job.dropTimer.unref();
    this.trimFinished(job.owner);
  }

  private trimFinished(owner: string): void {
    const finished = [...this.jobs.values()].filter((j) => j.owner === owner && j.status !== "running");
    for (const old of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED_PER_OWNER))) {
      clearTimeout(old.dropTimer);
      this.jobs.delete(old.id);
    }
    for (const old of finished.slice(0, Math.max(0, finished.length - KEEP_IMAGES_PER_OWNER))) {
      const images = old.result?.images;
      if (!old.result || !images?.length) continue;
      delete old.result.images;
      const dropped = `${images.length} image${images.length === 1 ? "" : "s"} dropped when newer jobs finished (the images of your ${KEEP_IMAGES_PER_OWNER} latest finished jobs are kept); save images to /workspace to keep them`;
      old.result.imagesNote = old.result.imagesNote ? `${old.result.imagesNote}; ${dropped}` : dropped;
    }
  }

  private soonestEndS(jobs: Job[]): number {
    const now = Date.now();
    const ends = jobs.map((j) => j.started + j.timeoutS * 1000 - now);
    return Math.max(1, Math.ceil(Math.min(...ends) / 1000));
  }

  /** `owner`'s job `id`; JOB_NOT_FOUND for unknown, dropped and other owners' ids alike. */
  private find(id: string, owner: string): Job {
    const job = this.jobs.get(id);
    if (job?.owner === owner) return job;
    throw new SandgateError("JOB_NOT_FOUND", `no background job ${id}; finished jobs are kept for ${Math.round(this.options.keepFinishedMs / 1000)} s, and only their caller sees them`, {
      data: { jobId: id },
    });
  }

  /** `owner`'s jobs, running and recently finished, oldest first. */
  list(owner: string = LOCAL_OWNER): JobInfo[] {
    return [...this.jobs.values()].filter((j) => j.owner === owner).map((j) => j.info());
  }

  /**
   * Job `id` with its output since `since`: at once, or after waiting up to `waitMs` for it to
   * end or (unless `until` is "end") for new output.
   */
  async get(id: string, owner: string = LOCAL_OWNER, options: JobReadOptions = {}): Promise<JobSnapshot> {
    const job = this.find(id, owner);
    const since = options.since ?? {};
    const deadline = Date.now() + (options.waitMs ?? 0);
    const newOutput = (): boolean => options.until !== "end" && (job.output.endOf("stdout") > (since.stdout ?? 0) || job.output.endOf("stderr") > (since.stderr ?? 0));
    const hasNews = (): boolean => job.status !== "running" || newOutput();
    while (!hasNews() && Date.now() < deadline && !options.signal?.aborted) await job.output.changed(deadline - Date.now(), options.signal);
    return this.snapshot(job, since, options.maxChars ?? this.options.displayChars);
  }

  private snapshot(job: Job, since: Partial<Record<OutputStream, number>>, maxChars: number): JobSnapshot {
    const out = job.output.read("stdout", since.stdout, maxChars);
    const err = job.output.read("stderr", since.stderr, maxChars);
    const skipped = { ...(out.skipped > 0 ? { stdout: out.skipped } : {}), ...(err.skipped > 0 ? { stderr: err.skipped } : {}) };
    return {
      ...job.info(),
      stdout: out.text,
      stderr: err.text,
      next: { stdout: out.next, stderr: err.next },
      ...(Object.keys(skipped).length > 0 ? { skipped } : {}),
      moreOutput: out.more || err.more,
      ...(job.result ? { result: job.result } : {}),
      ...(job.error ? { error: job.error } : {}),
    };
  }

  /** Stops `owner`'s job `id` (the running code is stopped as a cancelled call is) and returns it once it ended. */
  async stop(id: string, owner: string = LOCAL_OWNER, why = "stopped by its caller"): Promise<JobSnapshot> {
    const job = this.find(id, owner);
    this.abort(job, why);
    await job.finished;
    return this.snapshot(job, {}, this.options.displayChars);
  }

  private abort(job: Job, why: string): void {
    if (job.status !== "running" || job.stopReason !== undefined) return;
    job.stopReason = why;
    job.controller.abort();
  }

  /**
   * Output of `stream` from `since` as it arrives, until the job ends or `signal` aborts
   * (REST streaming). The job is looked up at once: JOB_NOT_FOUND throws before any output.
   */
  follow(id: string, stream: OutputStream, owner: string = LOCAL_OWNER, since = 0, signal?: AbortSignal): AsyncGenerator<string> {
    const job = this.find(id, owner);
    return (async function* follow(): AsyncGenerator<string> {
      let offset = since;
      while (!signal?.aborted) {
        const slice = job.output.read(stream, offset);
        offset = slice.next;
        if (slice.text !== "") yield slice.text;
        if (job.output.done && !slice.more) return;
        if (slice.text === "") await job.output.changed(30_000, signal);
      }
    })();
  }

  /** A running job in `session` whose kind `kind` accepts (calls to that runner cannot run meanwhile). */
  runningIn(session: SessionRef, kind: (kind: string) => boolean = () => true): JobInfo | undefined {
    for (const job of this.jobs.values()) if (job.status === "running" && runsIn(job, session) && kind(job.kind)) return job.info();
    return undefined;
  }

  /** Stops the jobs of `session`, which ended (`why`). */
  sessionEnded(session: SessionRef, why: string): void {
    for (const job of this.jobs.values()) if (runsIn(job, session)) this.abort(job, `its session ended (${why})`);
  }

  /** Running jobs of every owner. */
  get running(): number {
    return [...this.jobs.values()].filter((j) => j.status === "running").length;
  }

  /** Stops every job and waits until they ended; called as the engine closes. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const all = [...this.jobs.values()];
    for (const job of all) this.abort(job, "sandgate stopped");
    await Promise.all(all.map((j) => j.finished));
    for (const job of all) clearTimeout(job.dropTimer);
  }
}

/** A session as jobs name it: its owner's id, or (shared) its id alone, whoever started the job. */
interface SessionRef {
  owner: string;
  id: string;
  shared: boolean;
}

function runsIn(job: Job, session: SessionRef): boolean {
  return job.sessionId === session.id && (session.shared || job.owner === session.owner);
}
