// Analysis off the event loop: a few worker threads, one job each at a time, each job with a deadline;
// a worker that misses it, dies or runs out of memory is terminated and replaced on the next job.

import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { Language } from "../../../languages/index.js";
import type { Analysis } from "../types.js";

/** The compiled worker entry; absent when running from TypeScript sources (tests), then analysis runs inline. */
const ENTRY = new URL("./analysis-worker.js", import.meta.url);

/** Why an analysis did not finish: the caller turns it into a finding. */
export class AnalysisFailed extends Error {}

interface Job {
  id: number;
  /** Who asked: one caller's jobs do not hold up another's (see next()). */
  owner: string | undefined;
  language: Language;
  code: string;
  resolve: (analysis: Analysis) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  /** Its grammars are loaded: a job's deadline counts the analysis, not the worker's start. */
  ready: boolean;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
}

export class AnalysisPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: Job[] = [];
  private nextId = 1;
  private closed = false;

  private constructor(
    private readonly size: number,
    private readonly timeoutMs: number,
  ) {}

  /** A pool, or undefined where the compiled worker entry is not there (TypeScript sources). */
  static create(size: number, timeoutMs: number): AnalysisPool | undefined {
    return existsSync(fileURLToPath(ENTRY)) ? new AnalysisPool(size, timeoutMs) : undefined;
  }

  analyze(language: Language, code: string, owner?: string): Promise<Analysis> {
    if (this.closed) return Promise.reject(new AnalysisFailed("the analyzer is closed"));
    return new Promise((resolve, reject) => {
      this.waiting.push({ id: this.nextId++, owner, language, code, resolve, reject });
      this.dispatch();
    });
  }

  /** Starts one worker ahead of the first job (its grammars load meanwhile). */
  warm(): void {
    if (!this.closed && this.slots.length === 0) this.spawn().worker.unref();
  }

  /** Terminates every worker; jobs in flight or waiting fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) job.reject(new AnalysisFailed("the analyzer is closed"));
    await Promise.all([...this.slots].map((slot) => this.retire(slot, new AnalysisFailed("the analyzer is closed"))));
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      const slot = this.slots.find((s) => s.ready && s.job === undefined);
      if (!slot) {
        // A worker starting (referenced: the CLI waits for it) takes the job once it is ready.
        if (this.slots.every((s) => s.ready) && this.slots.length < this.size) this.spawn();
        for (const starting of this.slots) if (!starting.ready) starting.worker.ref();
        return;
      }
      const job = this.next();
      const target = slot;
      target.job = job;
      target.timer = setTimeout(() => {
        void this.retire(target, new AnalysisFailed(`the analysis took longer than ${this.timeoutMs} ms (security.analysisTimeoutMs)`));
      }, this.timeoutMs);
      // Busy, a worker keeps the process alive (the CLI waits for it); idle, it does not.
      target.worker.ref();
      target.worker.postMessage({ id: job.id, language: job.language, code: job.code });
    }
  }

  /** The oldest waiting job of a caller with none in a worker, else the oldest: a flood of one caller's slow jobs waits its turn. */
  private next(): Job {
    const busy = new Set(this.slots.map((s) => s.job?.owner));
    const index = this.waiting.findIndex((job) => job.owner === undefined || !busy.has(job.owner));
    return this.waiting.splice(Math.max(0, index), 1)[0] as Job;
  }

  private spawn(): Slot {
    // A heap cap: an analysis that runs out of memory ends its worker, not the server.
    const worker = new Worker(ENTRY, { resourceLimits: { maxOldGenerationSizeMb: 512, stackSizeMb: 8 } });
    const slot: Slot = { worker, ready: false, job: undefined, timer: undefined };
    worker.on("message", (reply: { ready?: boolean; id?: number; analysis?: Analysis; error?: string }) => {
      if (reply.ready !== undefined) {
        if (!reply.ready) return void this.retire(slot, new AnalysisFailed(`the analysis worker could not start: ${reply.error ?? "unknown error"}`));
        slot.ready = true;
        slot.worker.unref();
        return this.dispatch();
      }
      const job = slot.job;
      if (!job || job.id !== reply.id) return;
      this.finish(slot);
      if (reply.analysis) job.resolve(reply.analysis);
      else job.reject(new AnalysisFailed(`the analysis failed: ${reply.error ?? "unknown error"}`));
      this.dispatch();
    });
    worker.on("error", (error) => void this.retire(slot, new AnalysisFailed(`the analysis failed: ${error.message}`)));
    worker.on("exit", () => void this.retire(slot, new AnalysisFailed("the analysis worker exited")));
    this.slots.push(slot);
    return slot;
  }

  private finish(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.job = undefined;
    slot.worker.unref();
  }

  /** Removes a worker (its job fails with `error`) and lets waiting jobs go on with a fresh one. */
  private async retire(slot: Slot, error: Error): Promise<void> {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    const job = slot.job;
    this.finish(slot);
    job?.reject(error);
    // A worker that never got ready would fail again: the jobs waiting for it fail now instead.
    if (!slot.ready) for (const waiting of this.waiting.splice(0)) waiting.reject(error);
    await slot.worker.terminate();
    if (!this.closed) this.dispatch();
  }
}
